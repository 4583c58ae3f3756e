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
    'Returns a step-by-step guide (markdown) for a common need; its steps name the tools to call, with example arguments.',
    'Call it first for anything you have not done with Backyard before, and follow it.',
    'The guides are also MCP resources guide://<title>.',
  ].join(' '),
  effect: 'read',
  feature: 'guides',
  openWorld: false,
  method: 'GET',
  path: '/guides/{guideTitle}',
  input: z.strictObject({
    // The enumeration is advertised, not enforced: an unknown title must answer 404 with the list.
    guideTitle: z.string().min(1).meta({ enum: titles }).describe('Title of the guide (its file name without .md)'),
  }),
  output: guide,
  textResult: 'content',
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
