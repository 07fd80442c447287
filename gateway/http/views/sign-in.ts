// What GET /auth/options answers: whether the Playground offers single sign-on (and where it
// begins) and key sign-in. Only zod is imported, so the Playground's type check can read it.
import { z } from 'zod';

export const SignInOptionsView = z.strictObject({
  single_sign_on: z
    .strictObject({ issuer: z.string().describe("The issuer's name (identity file)."), login_url: z.string() })
    .nullable()
    .describe('null: single sign-on is not configured.'),
  key_sign_in: z.boolean().describe('false: sign in with single sign-on only.'),
});
export type SignInOptionsView = z.output<typeof SignInOptionsView>;
