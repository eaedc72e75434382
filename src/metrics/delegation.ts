/**
 * Delegated authentication and authorization for the secure port, as kube-controller-manager does
 * on 10257: a bearer token is checked with a TokenReview and the request with a SubjectAccessReview
 * (non-resource URL and verb), both answered by the API server and cached for a short time.
 *
 * This module is the decision and its caches, and the two reviews it asks the API server for. The
 * decision takes the reviews injected ({@link ReviewApi}, so the tests answer them);
 * {@link apiServerReviews} sends them over client-node. Time comes from the injected {@link Clock}.
 *
 * Upstream: `k8s.io/apiserver/pkg/server/options` `DelegatingAuthenticationOptions` /
 * `DelegatingAuthorizationOptions`, `authenticatorfactory.DelegatingAuthenticatorConfig`,
 * `authentication/token/cache` (`cachedTokenAuthenticator`), `plugin/pkg/authorizer/webhook`
 * (`WebhookAuthorizer` with its allow/deny cache), `authorization/path` (always-allow paths) and
 * `endpoints/filters` `WithAuthentication` / `WithAuthorization`; the reviews as
 * `plugin/pkg/authenticator/token/webhook` (`WebhookTokenAuthenticator`) and
 * `plugin/pkg/authorizer/webhook` (`WebhookAuthorizer`) send them.
 *
 * Deliberate differences (docs/secure-serving.md), each one can only refuse more, never allow more:
 * - no anonymous requests: a request without a bearer token gets 401 (upstream makes it
 *   `system:anonymous` and asks a SubjectAccessReview, which RBAC normally denies with 403);
 *   always-allow paths need no token at all, as with upstream's anonymous user;
 * - no client-certificate or request-header (front proxy) authentication;
 * - a SubjectAccessReview that cannot be sent gets 403 (upstream answers 500): never allowed.
 */
import { createHash } from 'node:crypto';
import type { V1SubjectAccessReview, V1TokenReview } from '@kubernetes/client-node';
import type { ReviewClients } from '../kube/client.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../log/logger.js';

/** The authenticated user, as in a TokenReview status (`authentication.k8s.io/v1` `UserInfo`). */
export interface ReviewedUser {
  username: string;
  uid: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/** The two reviews the API server answers for us ({@link apiServerReviews}). */
export interface ReviewApi {
  /**
   * Sends a TokenReview for `token`.
   * @returns the user when the API server authenticated the token, `undefined` when it did not.
   * @throws {Error} when no answer came (network, timeout, 5xx, or the review reported `status.error`
   *   without authenticating): the caller fails closed and does not cache.
   */
  reviewToken(token: string): Promise<ReviewedUser | undefined>;
  /**
   * Sends a SubjectAccessReview for `user` doing `verb` on the non-resource URL `path`.
   * @returns true when allowed, false when not.
   * @throws {Error} when no answer came: the caller fails closed and does not cache.
   */
  reviewAccess(user: ReviewedUser, path: string, verb: string): Promise<boolean>;
}

/** Upstream's `--authorization-always-allow-paths` default (`NewDelegatingAuthorizationOptions`). */
export const DEFAULT_ALWAYS_ALLOW_PATHS: readonly string[] = ['/healthz', '/readyz', '/livez'];

/**
 * Groups whose requests are allowed without a SubjectAccessReview: upstream's `AlwaysAllowGroups`
 * default, because kube-apiserver itself allows `system:masters` everything.
 */
export const ALWAYS_ALLOW_GROUPS: readonly string[] = ['system:masters'];

/** Upstream's cache TTL defaults, **milliseconds**: authentication 10 s, authorized 10 s, unauthorized 10 s. */
export const DEFAULT_TOKEN_CACHE_TTL_MS = 10_000;
export const DEFAULT_ALLOW_CACHE_TTL_MS = 10_000;
export const DEFAULT_DENY_CACHE_TTL_MS = 10_000;

/** Most entries either cache holds; the oldest is dropped past that (upstream: bounded LRU caches). */
export const REVIEW_CACHE_MAX_ENTRIES = 4096;

/**
 * Builds the always-allow matcher from `--authorization-always-allow-paths`.
 * @param paths e.g. `['/healthz', '/readyz', '/livez']`; a trailing `*` matches a prefix
 *   (`/debug/*`); a leading `/` is optional; `''` or `/` matches the root only.
 * @returns a predicate on the request path.
 * @throws {Error} when a `*` appears anywhere but at the end of an entry.
 * Upstream: `k8s.io/apiserver/pkg/authorization/path.NewAuthorizer`.
 */
export function alwaysAllowPathMatcher(paths: readonly string[]): (path: string) => boolean {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const raw of paths) {
    const p = raw.replace(/^\//, '');
    if (p.length > 0 && p.slice(0, -1).includes('*')) throw new Error(`only a trailing * is allowed in ${JSON.stringify(raw)}`);
    if (p.endsWith('*')) prefixes.push(p.slice(0, -1));
    else exact.add(p);
  }
  return (path) => {
    const p = path.replace(/^\//, '');
    return exact.has(p) || prefixes.some((prefix) => p.startsWith(prefix));
  };
}

/**
 * The bearer token of an `Authorization` header.
 * @returns the token, or `undefined` when the header is absent, not `Bearer`, or empty.
 * Upstream: `k8s.io/apiserver/pkg/authentication/request/bearertoken` (scheme case-insensitive).
 */
export function bearerToken(authorization: string | undefined): string | undefined {
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return m?.[1];
}

/** What the secure port answers: go on, or the refusal with its HTTP status and a one-line reason. */
export type AccessDecision =
  | { allowed: true; user: string | undefined }
  | { allowed: false; status: 401 | 403; reason: string };

/** Settings of {@link DelegatedAccess}. Durations in **milliseconds**; 0 disables that cache. */
export interface DelegatedAccessOptions {
  api: ReviewApi;
  clock: Clock;
  /** `--authentication-token-webhook-cache-ttl`: authenticated and unauthenticated answers alike. */
  tokenCacheTtlMs: number;
  /** `--authorization-webhook-cache-authorized-ttl`. */
  allowCacheTtlMs: number;
  /** `--authorization-webhook-cache-unauthorized-ttl`. */
  denyCacheTtlMs: number;
  /** `--authorization-always-allow-paths` (see {@link alwaysAllowPathMatcher}). */
  alwaysAllowPaths: readonly string[];
  /** Review failures (the API server unreachable) are logged here at `warn`. */
  log: Logger;
}

/** A TTL cache with a size bound; keys are digests, never tokens. */
class ExpiringCache<V> {
  readonly #entries = new Map<string, { value: V; expiresAtMs: number }>();

  constructor(
    readonly clock: Clock,
    readonly maxEntries: number,
  ) {}

  get(key: string): V | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    if (this.clock.now() >= e.expiresAtMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.#entries.delete(key);
    if (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { value, expiresAtMs: this.clock.now() + ttlMs });
  }

  get size(): number {
    return this.#entries.size;
  }
}

const digest = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * Decides whether one request to the secure port may be served.
 *
 * Order, as upstream's handler chain: always-allow paths are served without a token; otherwise the
 * bearer token is authenticated (TokenReview, cached), then `verb` on `path` is authorized for that
 * user (`system:masters` always; else SubjectAccessReview, cached). A review that gets no answer
 * refuses the request (401 or 403), is logged, and is not cached, so the next request asks again.
 */
export class DelegatedAccess {
  readonly #opts: DelegatedAccessOptions;
  readonly #alwaysAllow: (path: string) => boolean;
  readonly #tokens: ExpiringCache<ReviewedUser | null>;
  readonly #access: ExpiringCache<boolean>;

  /** @throws {Error} when an always-allow path is malformed ({@link alwaysAllowPathMatcher}). */
  constructor(opts: DelegatedAccessOptions) {
    this.#opts = opts;
    this.#alwaysAllow = alwaysAllowPathMatcher(opts.alwaysAllowPaths);
    this.#tokens = new ExpiringCache(opts.clock, REVIEW_CACHE_MAX_ENTRIES);
    this.#access = new ExpiringCache(opts.clock, REVIEW_CACHE_MAX_ENTRIES);
  }

  /**
   * @param path the request path without the query, e.g. `/debug/state`.
   * @param verb the non-resource verb, `get` for GET and HEAD.
   * @param authorization the request's `Authorization` header, if any.
   * @returns the decision. Never rejects: review failures become refusals.
   */
  async check(path: string, verb: string, authorization: string | undefined): Promise<AccessDecision> {
    if (this.#alwaysAllow(path)) return { allowed: true, user: undefined };
    const token = bearerToken(authorization);
    if (token === undefined) return { allowed: false, status: 401, reason: 'Unauthorized: a bearer token is required' };
    const user = await this.#authenticate(token);
    if (user === 'error') return { allowed: false, status: 401, reason: 'Unauthorized: the token could not be reviewed (TokenReview failed)' };
    if (user === null) return { allowed: false, status: 401, reason: 'Unauthorized' };
    if (user.groups.some((g) => ALWAYS_ALLOW_GROUPS.includes(g))) return { allowed: true, user: user.username };
    const allowed = await this.#authorize(user, path, verb);
    if (allowed === true) return { allowed: true, user: user.username };
    const why = allowed === 'error' ? ' (SubjectAccessReview failed)' : '';
    return { allowed: false, status: 403, reason: `forbidden: User "${user.username}" cannot ${verb} path "${path}"${why}` };
  }

  async #authenticate(token: string): Promise<ReviewedUser | null | 'error'> {
    const key = digest(token);
    const cached = this.#tokens.get(key);
    if (cached !== undefined) return cached;
    try {
      const user = (await this.#opts.api.reviewToken(token)) ?? null;
      this.#tokens.set(key, user, this.#opts.tokenCacheTtlMs);
      return user;
    } catch (err) {
      this.#opts.log.warn({ err }, 'secure port: TokenReview failed; refusing the request (401)');
      return 'error';
    }
  }

  async #authorize(user: ReviewedUser, path: string, verb: string): Promise<boolean | 'error'> {
    const key = digest(JSON.stringify([user.username, user.uid, [...user.groups].sort(), Object.entries(user.extra).sort(), path, verb]));
    const cached = this.#access.get(key);
    if (cached !== undefined) return cached;
    try {
      const allowed = await this.#opts.api.reviewAccess(user, path, verb);
      this.#access.set(key, allowed, allowed ? this.#opts.allowCacheTtlMs : this.#opts.denyCacheTtlMs);
      return allowed;
    } catch (err) {
      this.#opts.log.warn({ err, user: user.username, path, verb }, 'secure port: SubjectAccessReview failed; refusing the request (403)');
      return 'error';
    }
  }
}

/**
 * The {@link ReviewApi} over client-node.
 * @param clients from `makeReviewClients` (src/kube/client.ts).
 * @returns `reviewToken` (resolves with the user, or `undefined` when not authenticated; rejects when
 *   the review failed or reported `status.error` without authenticating) and `reviewAccess`
 *   (resolves `status.allowed`; rejects when the review failed).
 */
export function apiServerReviews(clients: ReviewClients): ReviewApi {
  return {
    async reviewToken(token: string): Promise<ReviewedUser | undefined> {
      // No audiences: the API server's own, as upstream's delegating authenticator without APIAudiences.
      const body: V1TokenReview = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } };
      const review = await clients.authentication.createTokenReview({ body });
      const status = review.status;
      if (!status?.authenticated) {
        // Upstream WebhookTokenAuthenticator: not authenticated with an error is an error (not cached).
        if (status?.error) throw new Error(`TokenReview: ${status.error}`);
        return undefined;
      }
      const u = status.user ?? {};
      return { username: u.username ?? '', uid: u.uid ?? '', groups: u.groups ?? [], extra: u.extra ?? {} };
    },
    async reviewAccess(user: ReviewedUser, path: string, verb: string): Promise<boolean> {
      const body: V1SubjectAccessReview = {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: user.username, uid: user.uid, groups: user.groups, extra: user.extra, nonResourceAttributes: { path, verb } },
      };
      const review = await clients.authorization.createSubjectAccessReview({ body });
      // Upstream WebhookAuthorizer: allowed (and not also denied) allows; anything else does not.
      return review.status?.allowed === true && review.status.denied !== true;
    },
  };
}
