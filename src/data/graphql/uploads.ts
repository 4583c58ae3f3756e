import { GraphQLError, GraphQLNonNull, GraphQLScalarType, type GraphQLObjectType } from 'graphql';
import { mutationWithClientMutationId } from 'graphql-relay';
import mime from 'mime';
import type { GraphQLContext } from './context.js';

/**
 * A file sent with a GraphQL multipart request (https://github.com/jaydenseric/graphql-multipart-request-spec):
 * its name and content type as the part declared them, and its bytes (already read, within the
 * data API's body limit: src/data/rest/handler.ts). Stored at most once, however many variables
 * it fills, through the data API's `POST /files/<name>` so that the upload passes REST's checks.
 */
export class Upload {
  private stored?: Promise<{ name: string; url: string }>;

  constructor(
    readonly filename: string,
    readonly mimetype: string,
    readonly data: Buffer,
    private readonly ctx: GraphQLContext,
  ) {}

  /**
   * The file's name as Parse Server uploads it (parse-server src/GraphQL/loaders/filesMutations.js,
   * `handleUpload`): the content type's extension is appended unless the name ends with it
   * (`photo` sent as `image/png` is `photo.png`); a type without a known extension leaves the name as sent.
   */
  get uploadName(): string {
    const ext = mime.getExtension(this.mimetype);
    return !ext || this.filename.endsWith(`.${ext}`) ? this.filename : `${this.filename}.${ext}`;
  }

  /**
   * Stores the file through the data API of the request that sent it (`POST /files/<name>`, with its keys).
   * @returns the stored name and URL.
   * @throws GraphQLError with the files route's Parse code (130 upload not allowed or refused type, 122 bad name, 129 too large).
   */
  store(): Promise<{ name: string; url: string }> {
    this.stored ??= this.ctx
      .call({ method: 'POST', path: `/files/${encodeURIComponent(this.uploadName)}`, raw: { data: this.data, contentType: this.mimetype } })
      .then((answer: { name: string; url: string }) => ({ name: answer.name, url: answer.url }));
    return this.stored;
  }
}

/**
 * The `Upload` scalar of the multipart request spec: a variable the request's `map` filled with a
 * file; never a literal, never an output (the messages of graphql-upload's `GraphQLUpload`, which
 * Parse Server uses).
 */
export const UPLOAD = new GraphQLScalarType({
  name: 'Upload',
  description: 'The `Upload` scalar type represents a file upload.',
  parseValue(value) {
    if (value instanceof Upload) return value;
    throw new GraphQLError('Upload value invalid.');
  },
  parseLiteral(node) {
    throw new GraphQLError('Upload literal unsupported.', { nodes: node });
  },
  serialize() {
    throw new GraphQLError('Upload serialization unsupported.');
  },
});

/** `createFile(input: {upload})` → `{fileInfo {name url}}` (parse-server src/GraphQL/loaders/filesMutations.js). */
export function createFileMutation(fileInfo: GraphQLObjectType) {
  return mutationWithClientMutationId({
    name: 'CreateFile',
    description: 'The createFile mutation can be used to create and upload a new file.',
    inputFields: { upload: { description: 'This is the new file to be created and uploaded.', type: new GraphQLNonNull(UPLOAD) } },
    outputFields: { fileInfo: { description: 'This is the created file info.', type: new GraphQLNonNull(fileInfo) } },
    mutateAndGetPayload: async (input) => ({ fileInfo: await (input.upload as Upload).store() }),
  });
}
