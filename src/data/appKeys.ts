/** The keys of a Backend App, as the platform keeps them (spec, Interface B, "Authentication"). */
export interface AppKeys {
  applicationId: string;
  restKey: string;
  javascriptKey: string;
  clientKey: string;
  dotnetKey: string;
  webhookKey: string;
  fileKey: string;
  masterKey: string;
  /** The app's name as its owner chose it (mails and pages say it), when the directory knows it. */
  appName?: string;
}
