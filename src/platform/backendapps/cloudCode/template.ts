/**
 * The cloud code tree a new Backend App starts with: `cloud/main.js` defining one
 * example function, and `public/index.html`, a page that loads the data SDK from
 * `{sdk_script_url}`, initialises it once the script has loaded and saves and counts test objects.
 * Both pass the deploy checks (`warnings.ts`), so they also show what the rules ask for.
 */

/** What a browser may know of an app: never its REST or master key (spec, Interface B, rules 1 and 3). */
export interface PublicAppFacts {
  applicationId: string;
  javascriptKey: string;
  /** The data API root, the SDK's `serverURL`. */
  apiURL: string;
  /** `{sdk_script_url}`, e.g. `http://localhost:4000/sdk/parse.min.js`. */
  sdkScriptUrl: string;
}

export const TEMPLATE_MAIN_JS = `// Cloud code of this Backend App. This file, cloud/main.js, is the entry point: it is loaded when
// the app's cloud code starts and again after every deploy, and a file under cloud/ runs only when
// this file requires it.
//
// Parse is a global here, already set up for this app with its master key: do not require the SDK
// and do not call Parse.initialize.
//
// Recommended layout, one function per file, with <tool> a folder name of your choice:
//   cloud/<tool>/functions/   Parse.Cloud.define(...)
//   cloud/<tool>/jobs/        Parse.Cloud.job(...)
//   cloud/<tool>/triggers/    Parse.Cloud.beforeSave(...), afterSave, beforeDelete, ...
// and one line here for each file, for example:
//   require('./todo/functions/countOpenToDos.js');

// An example function. Call it with POST <apiURL>/functions/hello and a body such as
// {"name": "Ada"}; it answers {"result": "Hello, Ada!"}.
Parse.Cloud.define('hello', (request) => {
  const name = typeof request.params.name === 'string' && request.params.name !== '' ? request.params.name : 'world';
  return \`Hello, \${name}!\`;
});
`;

/** What `TEMPLATE_MAIN_JS` registers: known without running it, so a new app needs no cloud worker. */
export const TEMPLATE_REGISTRY = { functions: ['hello'], jobs: [], triggers: {} };

/** A JavaScript string literal that is also safe inside an HTML `<script>` element. */
const jsString = (value: string) => JSON.stringify(value).replace(/</g, '\\u003c');
const htmlText = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The starter page, with the app's application id, JavaScript key and data API address. */
export function templateIndexHtml(app: PublicAppFacts): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Backend App</title>
  <style>
    body { font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5; }
    button { font: inherit; padding: 0.3rem 0.8rem; }
    #status { color: #555; }
  </style>
</head>
<body>
  <h1>It works</h1>
  <p>This page is <code>public/index.html</code> of your Backend App. It talks to the app's data API
    with the Parse JavaScript SDK, using only the application id and the JavaScript key, which are
    meant for browsers.</p>
  <p><button id="save">Save a test object</button> <span id="status">Loading the SDK…</span></p>

  <!-- 1. Load the data SDK. -->
  <script src="${htmlText(app.sdkScriptUrl)}"></script>
  <!-- 2. Initialise it once the page and the SDK have loaded. -->
  <script>
    window.addEventListener('load', function () {
      Parse.initialize(${jsString(app.applicationId)}, ${jsString(app.javascriptKey)});
      Parse.serverURL = ${jsString(app.apiURL)};

      var status = document.getElementById('status');
      function showCount() {
        return new Parse.Query('TestObject').count().then(function (count) {
          status.textContent = count + ' TestObject object' + (count === 1 ? '' : 's') + ' saved so far.';
        }, function (error) {
          status.textContent = 'Could not count: ' + error.message;
        });
      }
      document.getElementById('save').addEventListener('click', function () {
        var object = new Parse.Object('TestObject');
        object.save({ savedAt: new Date().toISOString() }).then(showCount, function (error) {
          status.textContent = 'Could not save: ' + error.message;
        });
      });
      showCount();
    });
  </script>
</body>
</html>
`;
}

/** The starter files, by tree path. */
export const templateFiles = (app: PublicAppFacts): Record<string, string> => ({
  'cloud/main.js': TEMPLATE_MAIN_JS,
  'public/index.html': templateIndexHtml(app),
});
