/**
 * src/kube/client.ts `undiciRequestHttpLibrary`: the typed clients' requests through undici's
 * `request` carry what client-node's fetch library carried, and hand back the same
 * `ResponseContext`. The peer is a node:http listener that echoes what it received: these tests are
 * about the HTTP adapter, not about the API server (the integration tests run every typed call
 * against a real kube-apiserver).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { HttpMethod, Observable, RequestContext, ResponseContext, type HttpLibrary } from '@kubernetes/client-node';
import { undiciRequestHttpLibrary } from '../../src/kube/client.js';

describe('undiciRequestHttpLibrary', () => {
  let server: Server;
  let base = '';
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        if (req.url === '/unauthorized') {
          res.writeHead(401, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ kind: 'Status', code: 401, padding: 'x'.repeat(100_000) }));
          return;
        }
        res.writeHead(201, [['content-type', 'application/json'], ['warning', '299 - "one"'], ['warning', '299 - "two"']]);
        res.end(JSON.stringify({ method: req.method, url: req.url, contentType: req.headers['content-type'], body }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });

  const fallbackUnused: HttpLibrary = { send: () => assert.fail('the fallback must not be used for a string body') };

  test('method, URL, headers and a JSON body go out; status, headers (a repeated one joined) and body come back', async () => {
    const req = new RequestContext(`${base}/api/v1/namespaces/ns/events?fieldManager=m`, HttpMethod.POST);
    req.setHeaderParam('Content-Type', 'application/json');
    req.setBody('{"a":1}');
    const res = await undiciRequestHttpLibrary(fallbackUnused).send(req).toPromise();
    assert.ok(res instanceof ResponseContext);
    assert.equal(res.httpStatusCode, 201);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['warning'], '299 - "one", 299 - "two"', 'as fetch\'s Headers joins a repeated header');
    assert.deepEqual(JSON.parse(await res.body.text()), { method: 'POST', url: '/api/v1/namespaces/ns/events?fieldManager=m', contentType: 'application/json', body: '{"a":1}' });
    assert.deepEqual(JSON.parse((await res.body.binary()).toString('utf8')).body, '{"a":1}');
  });

  test('a body nobody reads (client-node throws on 401 without reading it) does not hold the connection', { timeout: 10_000 }, async () => {
    const one = new Agent({ connections: 1 });
    try {
      for (let i = 0; i < 3; i++) {
        const req = new RequestContext(`${base}/unauthorized`, HttpMethod.GET);
        req.setDispatcher(one);
        const res = await undiciRequestHttpLibrary(fallbackUnused).send(req).toPromise();
        assert.equal(res.httpStatusCode, 401, `request ${i} over the one connection`);
      }
    } finally {
      await one.close();
    }
  });

  test('an aborted signal rejects with its reason, as fetch does', async () => {
    const ac = new AbortController();
    const reason = new Error('deadline');
    ac.abort(reason);
    const req = new RequestContext(`${base}/x`, HttpMethod.GET);
    req.setSignal(ac.signal);
    await assert.rejects(undiciRequestHttpLibrary(fallbackUnused).send(req).toPromise(), (e: unknown) => e === reason);
  });

  test('a body that is not a string goes to the fallback library', async () => {
    const sent: RequestContext[] = [];
    const fallback: HttpLibrary = {
      send: (r) => {
        sent.push(r);
        return new Observable(Promise.resolve(new ResponseContext(200, {}, { text: async () => '', binary: async () => Buffer.alloc(0), stream: () => null })));
      },
    };
    const req = new RequestContext(`${base}/x`, HttpMethod.POST);
    req.setBody(new URLSearchParams({ a: '1' }));
    const res = await undiciRequestHttpLibrary(fallback).send(req).toPromise();
    assert.equal(res.httpStatusCode, 200);
    assert.equal(sent.length, 1);
  });
});
