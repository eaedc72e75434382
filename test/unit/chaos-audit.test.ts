/**
 * The chaos suite's readings of the API server's audit log and of the controller's metrics
 * (test/chaos/harness.ts, test/chaos/scenarios.ts): what counts as a landed write, the wait before a
 * write answered 429 was sent again, whether a node's writes landed before its pods', and the summed
 * request counter. The scenarios' verdicts rest on these.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { landedWrite, totalRequests, type AuditEvent } from '../chaos/harness.js';
import { podsBeforeNode, retryGaps } from '../chaos/scenarios.js';

function ev(p: Partial<AuditEvent> & Pick<AuditEvent, 'verb' | 'resource' | 'code' | 'receivedMs'>): AuditEvent {
  return { user: 'u', subresource: undefined, namespace: undefined, name: undefined, completedMs: p.receivedMs + 5, ...p };
}

test('a landed write is a mutating verb answered 2xx; reads and refused writes are not', () => {
  assert.equal(landedWrite(ev({ verb: 'patch', resource: 'nodes', code: 200, receivedMs: 0 })), true);
  assert.equal(landedWrite(ev({ verb: 'delete', resource: 'pods', code: 200, receivedMs: 0 })), true);
  assert.equal(landedWrite(ev({ verb: 'create', resource: 'events', code: 201, receivedMs: 0 })), true);
  assert.equal(landedWrite(ev({ verb: 'update', resource: 'leases', code: 409, receivedMs: 0 })), false);
  assert.equal(landedWrite(ev({ verb: 'patch', resource: 'nodes', code: 429, receivedMs: 0 })), false);
  assert.equal(landedWrite(ev({ verb: 'get', resource: 'leases', code: 200, receivedMs: 0 })), false);
});

test('retry gaps pair a 429 with the next request of the same verb and object only; unnamed creates are left out', () => {
  const gaps = retryGaps([
    ev({ verb: 'patch', resource: 'nodes', subresource: 'status', name: 'n1', code: 429, receivedMs: 1000 }),
    ev({ verb: 'patch', resource: 'nodes', name: 'n1', code: 200, receivedMs: 1100 }), // another object (no subresource)
    ev({ verb: 'patch', resource: 'nodes', subresource: 'status', name: 'n2', code: 200, receivedMs: 1200 }), // another node
    ev({ verb: 'patch', resource: 'nodes', subresource: 'status', name: 'n1', code: 200, receivedMs: 3005 }),
    ev({ verb: 'create', resource: 'events', namespace: 'default', code: 429, receivedMs: 4000 }),
    ev({ verb: 'create', resource: 'events', namespace: 'default', code: 201, receivedMs: 4050 }),
    ev({ verb: 'get', resource: 'pods', name: 'p', code: 429, receivedMs: 5000 }),
    ev({ verb: 'get', resource: 'pods', name: 'p', code: 200, receivedMs: 5010 }),
  ]);
  assert.deepEqual(gaps, [{ key: 'patch/nodes/status//n1', gapMs: 2000 }]);
});

test('a pod write landing before its node’s is reported; refused writes and other nodes’ pods do not count', () => {
  const pods = new Map([
    ['n1', ['p1']],
    ['n2', ['p2']],
  ]);
  const events = [
    ev({ verb: 'patch', resource: 'nodes', subresource: 'status', name: 'n1', code: 200, receivedMs: 100 }),
    ev({ verb: 'delete', resource: 'pods', name: 'p1', code: 200, receivedMs: 200 }),
    ev({ verb: 'patch', resource: 'nodes', subresource: 'status', name: 'n2', code: 429, receivedMs: 100 }),
    ev({ verb: 'patch', resource: 'pods', subresource: 'status', name: 'p2', code: 200, receivedMs: 150 }),
    ev({ verb: 'patch', resource: 'nodes', subresource: 'status', name: 'n2', code: 200, receivedMs: 300 }),
  ];
  assert.deepEqual(podsBeforeNode(events, pods), ['n2']);
  assert.deepEqual(podsBeforeNode(events.slice(0, 2), pods), []);
});

test('the request total sums every rest_client_requests_total sample and nothing else', () => {
  const text = [
    '# HELP rest_client_requests_total Number of HTTP requests',
    'rest_client_requests_total{code="200",method="GET",host="h"} 12',
    'rest_client_requests_total{code="429",method="PATCH",host="h"} 3',
    'rest_client_request_duration_seconds_count{verb="GET"} 99',
  ].join('\n');
  assert.equal(totalRequests(text), 15);
});
