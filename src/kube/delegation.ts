/**
 * Sends the secure port's TokenReviews and SubjectAccessReviews (authentication.k8s.io/v1,
 * authorization.k8s.io/v1) to the API server: the I/O half of src/metrics/delegation.ts.
 *
 * Upstream: `k8s.io/apiserver/plugin/pkg/authenticator/token/webhook` (`WebhookTokenAuthenticator`)
 * and `plugin/pkg/authorizer/webhook` (`WebhookAuthorizer`), as wired by the delegating
 * authenticator and authorizer of kube-controller-manager's secure port.
 */
import type { V1SubjectAccessReview, V1TokenReview } from '@kubernetes/client-node';
import type { ReviewApi, ReviewedUser } from '../metrics/delegation.js';
import type { ReviewClients } from './client.js';

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
