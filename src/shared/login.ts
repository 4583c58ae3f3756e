/**
 * Account logins follow the usual repository-host rule (they double as owners on the built-in git
 * host): letters, digits and single dashes, 1 to 39, not starting or ending with a dash.
 */
export const LOGIN_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
