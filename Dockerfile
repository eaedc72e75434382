# syntax=docker/dockerfile:1
# node-lifecycle-controller image: compile with the full toolchain, run on distroless Node.js 24
# (no shell, no package manager) as its numeric `nonroot` user.
#   docker build -t node-lifecycle-controller:dev .
# Multi-arch (linux/amd64 and linux/arm64; see README "Install ours"):
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg VERSION=0.1.0 --build-arg REVISION="$(git rev-parse HEAD)" \
#     --build-arg CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)" -t REGISTRY/node-lifecycle-controller:0.1.0 --push .
# No Docker engine runs in this project's CI; test/unit/dockerfile.test.ts checks this file statically.

# ---- build stage: install everything, compile TypeScript, then drop dev dependencies ----
# On the build machine's platform: the output is JavaScript and pure-JS dependencies (no native
# modules in production), the same for every target, so buildx needs no emulation. Debian 13
# (trixie), like the runtime image.
FROM --platform=$BUILDPLATFORM node:24-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# As CI does (.ci/run); the `node` devDependency fetches the pinned Node 24 from the npm registry.
# --workspaces=false: the repository's workspace (packages/sim: the kubelet simulator and the demo,
# development tools) is not in the build context (.dockerignore) and never part of the image; npm
# installs and prunes the controller's own dependencies only (test/unit/build-contents.test.ts).
RUN npm ci --no-audit --no-fund --workspaces=false
COPY tsconfig.json tsconfig.build.json ./
# tsconfig.build.json compiles src/ only.
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --workspaces=false \
 && npm cache clean --force

# ---- runtime stage ----
# Node.js 24 on Debian 13, no shell; :nonroot runs as 65532:65532. Pin it by digest when you
# publish (FROM gcr.io/distroless/nodejs24-debian13:nonroot@sha256:…): no registry is reachable here.
FROM gcr.io/distroless/nodejs24-debian13:nonroot
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
# OCI image annotations (https://github.com/opencontainers/image-spec/blob/main/annotations.md).
LABEL org.opencontainers.image.title="node-lifecycle-controller" \
      org.opencontainers.image.description="Kubernetes node lifecycle, taint eviction, pod GC (out-of-service) and force-detach controllers, outside kube-controller-manager" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="gcr.io/distroless/nodejs24-debian13:nonroot"
# The git commit in node_lifecycle_controller_build_info{git_commit} (src/metrics/registry.ts).
ENV NODE_ENV=production NLC_GIT_COMMIT=${REVISION}
WORKDIR /app
# Root-owned and read-only to the runtime user: the pod runs with readOnlyRootFilesystem.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# distroless's nonroot user, numeric so that the kubelet can verify runAsNonRoot.
USER 65532:65532
# --secure-port default: /metrics, /healthz, /livez, /readyz, /debug/state (HTTPS, delegated authn/authz).
EXPOSE 10267
# --max-semi-space-size=16 (MiB): Node 24's V8 grows each of the young generation's two semi-spaces
# to 64 MiB, 128 MiB of RSS that a controller whose allocation is mostly short-lived JSON never
# needs (measured, issue 18: peak RSS -105 MiB at 300 nodes x 30 pods; see bench/cache-memory.ts and
# the bench's --ours-node-options, which passes the same flag). It is on the command line, not in
# NODE_OPTIONS, because the chart and manifests/ set NODE_OPTIONS (--max-old-space-size from the
# memory limit), which would replace an image ENV; both apply together.
# Node is PID 1 (no tini: distroless has none). That is safe here: the program handles SIGTERM and
# SIGINT itself (src/cli/run.ts: it releases the Lease and exits), and `run` starts no child processes
# that could become zombies. The script is part of the ENTRYPOINT so that a Pod's `args` (the chart
# and manifests/ pass flags there) are the program's flags, not a replacement for it.
ENTRYPOINT ["/nodejs/bin/node", "--max-semi-space-size=16", "dist/src/cli/main.js"]
CMD []
