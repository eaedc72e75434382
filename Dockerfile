# syntax=docker/dockerfile:1
# node-lifecycle-controller image: build with the full toolchain, run with production dependencies only.
#   docker build -t node-lifecycle-controller:dev .
# No Docker engine runs in this project's CI; test/unit/dockerfile.test.ts checks this file statically.

# ---- build stage: install everything, compile TypeScript, then drop dev dependencies ----
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# As CI does (.ci/run); the `node` devDependency fetches the pinned Node 24 from the npm registry.
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY sim ./sim
RUN npm run build \
 && npm prune --omit=dev \
 && npm cache clean --force

# ---- runtime stage ----
FROM node:24-bookworm-slim
ENV NODE_ENV=production
# tini as PID 1 forwards SIGTERM to node and reaps zombies (Node is not designed to run as PID 1).
# Not version-pinned: Debian stable only ships security rebuilds of tini.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Root-owned and read-only to the runtime user: the pod runs with readOnlyRootFilesystem.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The image's "node" user, numeric so that the kubelet can verify runAsNonRoot.
USER 1000:1000
# --metrics-bind-address default: /metrics, /healthz, /readyz (plain HTTP).
EXPOSE 10267
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/cli/main.js"]
