# syntax=docker/dockerfile:1
# The gateway image: the gateway's TypeScript sources (Node 24 runs them directly, by type stripping: no
# build), its production dependencies only, and the web console's static build (console/dist), which the
# gateway serves at /. No dev dependencies, tests or console sources reach the final stage.
#
#   docker build -f deploy/gateway.Dockerfile -t tollgate/gateway:0.1.0 \
#     --build-arg VERSION=0.1.0 --build-arg SOURCE=<repository URL> --build-arg LICENSES=<SPDX id> .
#   docker run -p 3000:3000 tollgate/gateway:0.1.0
#
# Build from the repository root (.dockerignore keeps node_modules, tests and builds out of the context).
# Without DATABASE_URL the gateway keeps its embedded database in DATA_DIR=/app/data, a volume owned by the
# image's user (uid/gid 1000, the node user of the base image, by number so that runAsNonRoot can verify it).
# The Helm chart runs `node gateway/src/main.ts` (the gateway) and `node gateway/src/migrate.ts` (the
# migration Job) from /app with a read-only root filesystem and a writable /tmp, on Postgres.
#
# tests/k8s/images.test.ts replays every stage without Docker (the files its COPY lines bring, then its RUN
# commands) and starts the result, so RUN commands stay relative to WORKDIR.
#
# The base image is pinned by digest (the tag is only for reading). To move to a newer Node 24 release, read
# the digest of the multi-platform index with `docker buildx imagetools inspect node:24-slim` (its "Digest:"
# line) and replace tag and digest here and in deploy/operator.Dockerfile.
ARG NODE_IMAGE=node:24.21.0-slim@sha256:0e0ff40c39bc087845bfb27465a0df4ea419520094bc35842ff83dd8cbe6f9b6

# Production dependencies of the gateway workspace, and the empty folders (data, compile cache) the final stage
# takes over.
# npm ci needs every workspace's manifest to match the lockfile, hence the three package.json files.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY gateway/package.json gateway/
COPY operator/package.json operator/
COPY console/package.json console/
RUN npm ci --omit=dev --workspace gateway --no-audit --no-fund \
  && mkdir -p gateway/node_modules data compile-cache

# The console's static build (console/dist). console/tsconfig.json extends tsconfig.base.json.
FROM ${NODE_IMAGE} AS console
WORKDIR /app
COPY package.json package-lock.json ./
COPY gateway/package.json gateway/
COPY operator/package.json operator/
COPY console/package.json console/
RUN npm ci --workspace console --no-audit --no-fund
COPY tsconfig.base.json ./
# The settings page checks billing expressions with the gateway's own parser (no dependencies of its own).
COPY gateway/src/domain/billing/expr/ gateway/src/domain/billing/expr/
COPY gateway/src/domain/time-zones.ts gateway/src/domain/
COPY console/ console/
RUN npm run build --workspace console

FROM ${NODE_IMAGE}
ARG VERSION=0.1.0
ARG SOURCE=""
ARG LICENSES=""
LABEL org.opencontainers.image.title="tollgate-gateway" \
  org.opencontainers.image.description="Tollgate AI model gateway (new-api compatible) with its web console" \
  org.opencontainers.image.version="${VERSION}" \
  org.opencontainers.image.source="${SOURCE}" \
  org.opencontainers.image.licenses="${LICENSES}"
ENV NODE_ENV=production \
  DATA_DIR=/app/data
WORKDIR /app
COPY --from=deps /app/node_modules node_modules/
COPY --from=deps /app/gateway/node_modules gateway/node_modules/
COPY package.json ./
COPY gateway/package.json gateway/
COPY gateway/src gateway/src/
COPY --from=console /app/console/dist console/dist/
COPY --from=deps --chown=1000:1000 /app/data data/
COPY --from=deps --chown=1000:1000 /app/compile-cache compile-cache/
COPY scripts/warm-compile-cache.mjs scripts/
USER 1000:1000
# Node's compile cache, filled here by the image's user (Node keeps one per uid and V8 flags): the gateway
# finds every module compiled, starts faster and never loads Node's TypeScript stripper (about 10 MiB less
# idle RSS). Reading it is enough (the chart's read-only root filesystem). The RUN names the folder relative
# to WORKDIR, as tests/k8s/images.test.ts replays it.
RUN node scripts/warm-compile-cache.mjs compile-cache
ENV NODE_COMPILE_CACHE=/app/compile-cache
# glibc's malloc hands freed memory back above 4 MiB (scripts/malloc-tunables.mjs says why; the test compares).
ENV GLIBC_TUNABLES=glibc.malloc.trim_threshold=4194304
VOLUME /app/data
EXPOSE 3000 9090
CMD ["node", "gateway/src/main.ts"]
