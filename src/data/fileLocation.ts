/**
 * Files uploaded to parse.com before Parse Server existed, still named in old objects: `tfss-…`
 * names lived on files.parsetfss.com and names that start with a UUID and `-` on files.parse.com,
 * both under the app's file key (Parse Server's FilesController.expandFilesInObject).
 */
const LEGACY_UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}-/;

/**
 * The URL a File value named `name` is answered with: the old hosts above for legacy names when the
 * app has a file key (every Backend App has one), else the data API's download route
 * `<dataApiUrl>/files/<appId>/<name>` (rest/routes/public.ts), both parts URL-encoded.
 */
export function fileLocation(dataApiUrl: string, applicationId: string, fileKey: string | undefined, name: string): string {
  if (fileKey) {
    if (name.startsWith('tfss-')) return `http://files.parsetfss.com/${fileKey}/${encodeURIComponent(name)}`;
    if (LEGACY_UUID.test(name)) return `http://files.parse.com/${fileKey}/${encodeURIComponent(name)}`;
  }
  return `${dataApiUrl}/files/${encodeURIComponent(applicationId)}/${encodeURIComponent(name)}`;
}
