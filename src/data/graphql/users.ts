import { GraphQLBoolean, GraphQLNonNull, GraphQLString, type GraphQLFieldConfig, type GraphQLInputObjectType, type GraphQLObjectType } from 'graphql';
import { mutationWithClientMutationId } from 'graphql-relay';
import { ParseCode } from '../errors.js';
import type { Build } from './classTypes.js';
import { parseError, type GraphQLContext } from './context.js';
import { nestedCreate, toParseFields } from './inputs.js';
import { includesFor, selectedPaths, below } from './selection.js';
import * as T from './types.js';

type Source = Record<string, any>;

/**
 * The current user of a session as a `Viewer` (`{sessionToken, user}`), read through the data API
 * as that session's user (parse-server src/GraphQL/loaders/usersQueries.js). After a sign-up or
 * log-in (`fresh`) nothing is read when only the token is selected.
 * @throws GraphQLError 209 without a session token; the data API's errors.
 */
async function viewerOf(ctx: GraphQLContext, build: Build, sessionToken: string | undefined, paths: string[], fresh: boolean) {
  if (!sessionToken) throw parseError(ParseCode.INVALID_SESSION_TOKEN, 'Invalid session token');
  if (fresh && paths.length === 0) return { sessionToken };
  let user = await ctx.call({ method: 'GET', path: '/users/me', sessionToken });
  const include = includesFor(paths, '_User', build.classes.fields);
  if (include.length) user = await ctx.call({ method: 'GET', path: `/classes/_User/${encodeURIComponent(user.objectId)}`, query: { include: include.join(',') }, sessionToken });
  delete user.sessionToken;
  return { sessionToken, user };
}

/**
 * `viewer` and the `signUp`, `logIn` and `logOut` mutations under Parse Server's names and shapes
 * (parse-server src/GraphQL/loaders/usersMutations.js): signing up creates a `_User` through the
 * data API (`POST /users`), logging in is `POST /login`, logging out `POST /logout`.
 */
export function userOperations(viewer: GraphQLObjectType, createUser: GraphQLInputObjectType, build: Build) {
  const viewerQuery: GraphQLFieldConfig<Source, GraphQLContext> = {
    type: new GraphQLNonNull(viewer),
    description: 'The viewer query can be used to return the current user data.',
    resolve: (_s, _a, ctx, info) => viewerOf(ctx, build, ctx.sessionToken, below(selectedPaths(info), 'user.'), false),
  };
  const viewerField = { viewer: { type: new GraphQLNonNull(viewer) } };
  const signUp = mutationWithClientMutationId({
    name: 'SignUp',
    description: 'The signUp mutation can be used to create and sign up a new user.',
    inputFields: { fields: { type: createUser } },
    outputFields: viewerField,
    mutateAndGetPayload: async (input, ctx: GraphQLContext, info) => {
      const fields = await toParseFields(input.fields ?? {}, '_User', build.classes.fields, nestedCreate(ctx));
      const created = await ctx.call({ method: 'POST', path: '/users', body: fields });
      return { viewer: await viewerOf(ctx, build, created.sessionToken, below(selectedPaths(info), 'viewer.user.'), true) };
    },
  });
  const logIn = mutationWithClientMutationId({
    name: 'LogIn',
    description: 'The logIn mutation can be used to log in an existing user.',
    inputFields: { username: { type: new GraphQLNonNull(GraphQLString) }, password: { type: new GraphQLNonNull(GraphQLString) }, authData: { type: T.OBJECT } },
    outputFields: viewerField,
    mutateAndGetPayload: async (input, ctx: GraphQLContext, info) => {
      const body: Record<string, unknown> = { username: input.username, password: input.password };
      if (input.authData) body.authData = input.authData;
      const user = await ctx.call({ method: 'POST', path: '/login', body });
      return { viewer: await viewerOf(ctx, build, user.sessionToken, below(selectedPaths(info), 'viewer.user.'), true) };
    },
  });
  const logOut = mutationWithClientMutationId({
    name: 'LogOut',
    description: 'The logOut mutation can be used to log out an existing user.',
    inputFields: {},
    outputFields: { ok: { type: new GraphQLNonNull(GraphQLBoolean) } },
    mutateAndGetPayload: async (_input, ctx: GraphQLContext) => {
      await ctx.call({ method: 'POST', path: '/logout' });
      return { ok: true };
    },
  });
  return { viewer: viewerQuery, mutations: { signUp, logIn, logOut } };
}
