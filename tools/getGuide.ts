import { z } from 'zod';
import { notFound } from '../src/errors.js';
import { bundledGuides } from '../src/platform/guides/bundled.js';
import { fillAddresses } from '../src/platform/urls.js';
import { defineOperation } from './operation.js';
import { guide } from './schemas.js';

const titles = bundledGuides().titles();

export const getGuide = defineOperation({
  name: 'getGuide',
  title: 'Read a guide',
  description: [
    'Returns a step-by-step guide (markdown) for a common user need: each step names the tool to call and example arguments.',
    'Call it first when the person asks for something you have not done with Backyard before (running commands, creating a Backend App and its data, cloud code, hosting a site, deploying a Web App, fixing a failed deployment), then follow the steps.',
    `Titles: ${titles.join(', ')}. The guides are also MCP resources at guide://<title>.`,
  ].join(' '),
  effect: 'read',
  openWorld: false,
  method: 'GET',
  path: '/guides/{guideTitle}',
  input: z.strictObject({
    // The enumeration is advertised, not enforced: an unknown title must answer 404 with the list.
    guideTitle: z.string().min(1).meta({ enum: titles }).describe('Title of the guide (its file name without .md)'),
  }),
  output: guide,
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: ({ guideTitle }, { services }) => {
    const found = services.guides.get(guideTitle);
    if (!found) {
      throw notFound(`There is no guide titled "${guideTitle}". Guides that exist: ${services.guides.titles().join(', ')}.`);
    }
    return { content: fillAddresses(found.content, services.urls) };
  },
});
