import { GraphQLBoolean, GraphQLNonNull, GraphQLString } from 'graphql';
import { mutationWithClientMutationId } from 'graphql-relay';
import type { GraphQLContext } from './context.js';

/** Type names these mutations bring into the schema (reserved against class names, schema.ts). */
export const USER_EMAIL_TYPE_NAMES = ['ResetPassword', 'ConfirmResetPassword', 'SendVerificationEmail'].flatMap((n) => [`${n}Input`, `${n}Payload`]);

const okField = { ok: { type: new GraphQLNonNull(GraphQLBoolean), description: "It's always true." } };
const text = (description: string) => ({ type: new GraphQLNonNull(GraphQLString), description });

/**
 * The mutations of Parse Server 9 around a user's email (parse-server
 * src/GraphQL/loaders/usersMutations.js), each answering `{ok: true}`:
 * - `resetPassword(input: {email})`: the data API's `POST /requestPasswordReset` (a reset mail
 *   through the app's mailer; the same answer for an unknown address);
 * - `sendVerificationEmail(input: {email})`: `POST /verificationEmailRequest`;
 * - `confirmResetPassword(input: {username, password, token})`: sets the password of the user the
 *   mailed `token` belongs to, as the reset page does (GraphQLContext.confirmResetPassword).
 *   Parse Server reads only the token and the password; `username` is required and not used.
 * Errors carry the data API's Parse codes (204 no email, 125 a bad one, 201 no password).
 */
export function userEmailMutations() {
  const resetPassword = mutationWithClientMutationId({
    name: 'ResetPassword',
    description: 'The resetPassword mutation can be used to reset the password of an existing user.',
    inputFields: { email: text('Email of the user that should receive the reset email') },
    outputFields: okField,
    mutateAndGetPayload: async (input, ctx: GraphQLContext) => {
      await ctx.call({ method: 'POST', path: '/requestPasswordReset', body: { email: input.email } });
      return { ok: true };
    },
  });
  const confirmResetPassword = mutationWithClientMutationId({
    name: 'ConfirmResetPassword',
    description: 'The confirmResetPassword mutation can be used to reset the password of an existing user.',
    inputFields: {
      username: text('Username of the user that have received the reset email'),
      password: text('New password of the user'),
      token: text('Reset token that was emailed to the user'),
    },
    outputFields: okField,
    mutateAndGetPayload: async (input, ctx: GraphQLContext) => {
      await ctx.confirmResetPassword(input.token, input.password);
      return { ok: true };
    },
  });
  const sendVerificationEmail = mutationWithClientMutationId({
    name: 'SendVerificationEmail',
    description: 'The sendVerificationEmail mutation can be used to send the verification email again.',
    inputFields: { email: text('Email of the user that should receive the verification email') },
    outputFields: okField,
    mutateAndGetPayload: async (input, ctx: GraphQLContext) => {
      await ctx.call({ method: 'POST', path: '/verificationEmailRequest', body: { email: input.email } });
      return { ok: true };
    },
  });
  return { resetPassword, confirmResetPassword, sendVerificationEmail };
}
