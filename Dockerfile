# syntax=docker/dockerfile:1
# node-lifecycle-controller image: bundle with the full toolchain (esbuild, one file), run on distroless Node.js 24
# (no shell, no package manager) as its numeric `nonroot` user.
#   docker build -t node-lifecycle-controller:dev .
# Multi-arch (linux/amd64 and linux/arm64; see README "Install ours"):
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg VERSION=0.1.0 --build-arg REVISION="$(git rev-parse HEAD)" \
#     --build-arg CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)" -t REGISTRY/node-lifecycle-controller:0.1.0 --push .
# No Docker engine runs on this project's machines: there `npm run release -- --dry-run` builds the
# runtime stage's image without one (scripts/release/image.ts: umoci, its configuration read from
# this file, a distroless-style base from Debian's packages, since no registry is reachable) and
# runs it with runc; the release workflow builds this file with buildx. test/unit/dockerfile.test.ts
# checks this file statically.

# ---- build stage: install everything, bundle the program into one file with esbuild ----
# On the build machine's platform: the output is one JavaScript file with no native modules (the
# release checks it: scripts/release/main.ts), the same for every target, so buildx needs no
# emulation for it. Debian 13 (trixie), like the runtime image.
# Base images are pinned by digest (the tag says which image, the digest fixes its content). No
# registry is reachable from this project's machines, so these digests were taken from public
# Dockerfiles that pin the same tags, not resolved here: the release workflow
# (.github/workflows/release.yml) checks, before it builds, that each one resolves to an index
# holding linux/amd64 and linux/arm64; update them (tag and digest together) there when it fails.
FROM --platform=$BUILDPLATFORM node:24-trixie-slim@sha256:8ec5d7557396cfe32d21c3f9c13072355ceab22b584578ca4bb28af31120cffe AS build
WORKDIR /app
COPY package.json package-lock.json ./
# As CI does (.ci/run); the `node` devDependency fetches the pinned Node 24 from the npm registry.
# --workspaces=false: the repository's workspace (packages/sim: the kubelet simulator and the demo,
# development tools) is not in the build context (.dockerignore) and never part of the image; npm
# installs the controller's own dependencies only (test/unit/build-contents.test.ts).
RUN npm ci --no-audit --no-fund --workspaces=false
# esbuild reads tsconfig.json's compiler options; src/ is the whole program; LICENSE ships with it.
COPY tsconfig.json LICENSE ./
COPY src ./src
# The bundle replaces dist/ and node_modules/ in the image: measured (bench/bundle-startup.ts,
# docs/release.md) it starts faster and holds less memory than the node_modules layout.
RUN npm run build:bundle \
 && npm cache clean --force

# ---- runtime stage ----
# Node.js 24 on Debian 13, no shell; :nonroot runs as 65532:65532.
FROM gcr.io/distroless/nodejs24-debian13:nonroot@sha256:774b7d020b24214835769e24c3544835526cd0288f0b094eae48e8b2c2429a79
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
      org.opencontainers.image.source="https://github.com/node-lifecycle-controller/node-lifecycle-controller" \
      org.opencontainers.image.url="https://github.com/node-lifecycle-controller/node-lifecycle-controller" \
      org.opencontainers.image.base.name="gcr.io/distroless/nodejs24-debian13:nonroot" \
      org.opencontainers.image.base.digest="sha256:774b7d020b24214835769e24c3544835526cd0288f0b094eae48e8b2c2429a79"
# The git commit in node_lifecycle_controller_build_info{git_commit} (src/metrics/registry.ts).
# NODE_COMPILE_CACHE: where node finds the bundle's V8 code cache, written below at build time.
ENV NODE_ENV=production NLC_GIT_COMMIT=${REVISION} NODE_COMPILE_CACHE=/home/nonroot/.cache/node-compile-cache
WORKDIR /app
# Root-owned and read-only to the runtime user: the pod runs with readOnlyRootFilesystem.
COPY --from=build /app/dist/bundle/node-lifecycle-controller.mjs ./node-lifecycle-controller.mjs
COPY --from=build /app/LICENSE ./LICENSE
# distroless's nonroot user, numeric so that the kubelet can verify runAsNonRoot.
USER 65532:65532
# The bundle's V8 code cache, built into the image: V8 compiles the 3.6 MB bundle before any of it
# runs, so only a cache that exists before node starts spares a Pod's start that compile (measured:
# bench/startup.ts at 501 x 30, CPU to caches synced 1.82 -> 1.65 s; bench/README.md, 2026-12-03).
# Exec form, so distroless needs no shell; the ENTRYPOINT's node and flags, as the image's user,
# because node files the cache under its version, architecture and uid (another runAsUser, or a
# cache V8 rejects, is a cold start as before: node leaves the read-only root filesystem alone).
# For linux/arm64 this step runs the arm64 node under emulation (the release workflow sets up QEMU).
RUN ["/nodejs/bin/node", "--max-semi-space-size=16", "node-lifecycle-controller.mjs", "--version"]
# --secure-port default: /metrics, /healthz, /livez, /readyz, /debug/state (HTTPS, delegated authn/authz).
EXPOSE 10267
# --max-semi-space-size=16 (MiB): Node 24's V8 grows each of the young generation's two semi-spaces
# to 64 MiB, 128 MiB of RSS that a controller whose allocation is mostly short-lived JSON never
# needs (measured: peak RSS -105 MiB at 300 nodes x 30 pods; see bench/cache-memory.ts and
# the bench's --ours-node-options, which passes the same flag). It is on the command line, not in
# NODE_OPTIONS, because the chart and manifests/ set NODE_OPTIONS (--max-old-space-size from the
# memory limit), which would replace an image ENV; both apply together.
# Node is PID 1 (no tini: distroless has none). That is safe here: the program handles SIGTERM and
# SIGINT itself (src/cli/run.ts: it releases the Lease and exits), and `run` starts no child processes
# that could become zombies. The bundle is part of the ENTRYPOINT so that a Pod's `args` (the chart
# and manifests/ pass flags there) are the program's flags, not a replacement for it.
ENTRYPOINT ["/nodejs/bin/node", "--max-semi-space-size=16", "node-lifecycle-controller.mjs"]
CMD []
