import { SignJWT } from 'jose';

export const TEST_BEARER_SECRET = 'test-bearer-secret-0123456789abcdef';

/** A user bearer token as an issuer would mint it (HS256 with the shared secret). */
export async function mintBearer(
  sub: string,
  claims: Record<string, unknown> = {},
  opts: { secret?: string; expiresIn?: string | number } = {},
): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(opts.expiresIn ?? '1h')
    .sign(new TextEncoder().encode(opts.secret ?? TEST_BEARER_SECRET));
}
