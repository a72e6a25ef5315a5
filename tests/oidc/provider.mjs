// A real OpenID provider for signoff's sign-in tests: the certified npm oidc-provider, on a
// loopback port, with one confidential client (PKCE required), people whose claims (and groups)
// the test sets, devInteractions' login form (any password), and an end_session_endpoint.
//
// Environment: PORT (default: any free one), CLIENT_ID, CLIENT_SECRET, ACCOUNTS (JSON: sub ->
// claims). Prints one JSON line ({"issuer": ...}) once listening. Extra endpoints for the tests,
// outside the protocol:
//   POST /test/client          ({"redirect_uris": [...], "post_logout_redirect_uris": [...]})
//        registers the client and opens the provider (until then it answers 503): the test's
//        signoff server, and so its redirect URI, is made once the provider's port is known;
//   PUT  /test/accounts/:sub   (JSON claims) sets a person's claims, e.g. their groups;
//   POST /test/token-mode      ({"mode": "tamper" | "audience" | ""}) changes the ID token of
//        the next token response: "tamper" edits its payload without signing it again,
//        "audience" signs it again with the provider's own key for another audience.
import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import { SignJWT, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK } from 'jose';

const env = process.env;
const accounts = new Map(Object.entries(JSON.parse(env.ACCOUNTS || '{}')));
let tokenMode = '';

const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' };

function openProvider(issuer, client) {
  const provider = new Provider(issuer, {
    clients: [{
      client_id: env.CLIENT_ID,
      client_secret: env.CLIENT_SECRET,
      redirect_uris: client.redirect_uris,
      post_logout_redirect_uris: client.post_logout_redirect_uris || [],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    }],
    jwks: { keys: [signingKey] },
    pkce: { required: () => true },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username', 'groups'],
    },
    cookies: { keys: ['signoff-oidc-test-cookie-key'] },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    // A first-party client: consent is given once the person has signed in.
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) {
        const found = await ctx.oidc.provider.Grant.find(grantId);
        if (found) return found;
      }
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
    async findAccount(ctx, sub) {
      if (!accounts.has(sub)) return undefined;
      return { accountId: sub, async claims() { return { sub, ...accounts.get(sub) }; } };
    },
  });

  provider.use(async (ctx, next) => {
    await next();
    if (ctx.path === '/token' && ctx.status === 200 && tokenMode && ctx.body?.id_token) {
      const mode = tokenMode;
      tokenMode = '';
      const [header, , signature] = ctx.body.id_token.split('.');
      const claims = decodeJwt(ctx.body.id_token);
      if (mode === 'tamper') {
        const edited = Buffer.from(JSON.stringify({ ...claims, sub: 'mallory' })).toString('base64url');
        ctx.body = { ...ctx.body, id_token: `${header}.${edited}.${signature}` };
      } else if (mode === 'audience') {
        const key = await importJWK(signingKey, 'RS256');
        const resigned = await new SignJWT({ ...claims, aud: 'another-client' })
          .setProtectedHeader(decodeProtectedHeader(ctx.body.id_token))
          .sign(key);
        ctx.body = { ...ctx.body, id_token: resigned };
      }
    }
  });

  return provider.callback();
}

async function readJson(req) {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body ? JSON.parse(body) : {};
}

let issuer = '';
let callback = null;
const server = createServer(async (req, res) => {
  const url = new URL(req.url, issuer);
  const answer = (status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  try {
    if (req.method === 'POST' && url.pathname === '/test/client') {
      if (callback) return answer(409, { error: 'the client is registered already' });
      callback = openProvider(issuer, await readJson(req));
      return answer(200, { issuer });
    }
    if (req.method === 'PUT' && url.pathname.startsWith('/test/accounts/')) {
      const sub = decodeURIComponent(url.pathname.slice('/test/accounts/'.length));
      accounts.set(sub, await readJson(req));
      return answer(200, { sub, ...accounts.get(sub) });
    }
    if (req.method === 'POST' && url.pathname === '/test/token-mode') {
      tokenMode = (await readJson(req)).mode || '';
      return answer(200, { mode: tokenMode });
    }
  } catch (error) {
    return answer(400, { error: String(error) });
  }
  if (!callback) return answer(503, { error: 'no client registered yet (POST /test/client)' });
  return callback(req, res);
});
server.listen(Number(env.PORT || 0), '127.0.0.1', () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
