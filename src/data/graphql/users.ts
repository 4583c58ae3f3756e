import { GraphQLBoolean, GraphQLInputObjectType, GraphQLNonNull, GraphQLString, type GraphQLFieldConfig, type GraphQLObjectType } from 'graphql';
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
 * `viewer` and the `signUp`, `logInWith`, `logIn` and `logOut` mutations under Parse Server's names
 * and shapes (parse-server src/GraphQL/loaders/usersMutations.js): signing up creates a `_User`
 * through the data API (`POST /users`), logging in is `POST /login`, logging out `POST /logout`.
 * `logInWith(input: {authData, fields})` is `POST /users` with the `authData` of sign-in providers:
 * the user linked to them is logged in, or a new one is signed up with `fields` (the `_User`
 * create fields less `username`, `password` and `authData`: the type `UserLoginWithInput`).
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
  const logInWithFields = new GraphQLInputObjectType({
    name: 'UserLoginWithInput',
    fields: () =>
      Object.fromEntries(
        Object.values(createUser.getFields())
          .filter((f) => !['username', 'password', 'authData'].includes(f.name))
          .map((f) => [f.name, { type: f.type, description: f.description }]),
      ),
  });
  const logInWith = mutationWithClientMutationId({
    name: 'LogInWith',
    description:
      'The logInWith mutation can be used to signup, login user with 3rd party authentication system. This mutation create a user if the authData do not correspond to an existing one.',
    inputFields: {
      authData: { type: new GraphQLNonNull(T.OBJECT), description: 'This is the auth data of your custom auth provider' },
      fields: { type: logInWithFields, description: 'These are the fields of the user to be created/updated and logged in.' },
    },
    outputFields: viewerField,
    mutateAndGetPayload: async (input, ctx: GraphQLContext, info) => {
      const fields = await toParseFields(input.fields ?? {}, '_User', build.classes.fields, nestedCreate(ctx));
      const user = await ctx.call({ method: 'POST', path: '/users', body: { ...fields, authData: input.authData } });
      return { viewer: await viewerOf(ctx, build, user.sessionToken, below(selectedPaths(info), 'viewer.user.'), true) };
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
  return { viewer: viewerQuery, mutations: { signUp, logInWith, logIn, logOut } };
}
