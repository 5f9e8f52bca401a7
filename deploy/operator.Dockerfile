# syntax=docker/dockerfile:1
# The operator image: the operator's TypeScript sources (Node 24 runs them directly, by type stripping: no
# build) and its production dependencies only. The operator imports the gateway's store and domain through
# the workspace package @tollgate/gateway, so the gateway's sources ship too (not its console, no tests).
#
#   docker build -f deploy/operator.Dockerfile -t tollgate/operator:0.1.0 \
#     --build-arg VERSION=0.1.0 --build-arg SOURCE=<repository URL> --build-arg LICENSES=<SPDX id> .
#
# Build from the repository root. Runs as uid/gid 1000 (the node user of the base image, by number so that
# runAsNonRoot can verify it). The Helm chart runs `node operator/src/main.ts` from /app with a read-only root
# filesystem; the operator needs DATABASE_URL (a migrated gateway database) and a cluster (in-cluster service
# account, or KUBECONFIG).
#
# tests/k8s/images.test.ts replays every stage without Docker (the files its COPY lines bring, then its RUN
# commands) and starts the result, so RUN commands stay relative to WORKDIR.
#
# The base image is pinned by digest (the tag is only for reading). To move to a newer Node 24 release, read
# the digest of the multi-platform index with `docker buildx imagetools inspect node:24-slim` (its "Digest:"
# line) and replace tag and digest here and in deploy/gateway.Dockerfile.
ARG NODE_IMAGE=node:24.21.0-slim@sha256:0e0ff40c39bc087845bfb27465a0df4ea419520094bc35842ff83dd8cbe6f9b6

# Production dependencies of the operator workspace and of the gateway workspace it depends on. npm ci needs
# every workspace's manifest to match the lockfile, hence the three package.json files.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY gateway/package.json gateway/
COPY operator/package.json operator/
COPY console/package.json console/
RUN npm ci --omit=dev --workspace operator --no-audit --no-fund \
  && mkdir -p gateway/node_modules operator/node_modules

FROM ${NODE_IMAGE}
ARG VERSION=0.1.0
ARG SOURCE=""
ARG LICENSES=""
LABEL org.opencontainers.image.title="tollgate-operator" \
  org.opencontainers.image.description="Tollgate Kubernetes operator: reconciles tollgate.dev resources into the gateway's database" \
  org.opencontainers.image.version="${VERSION}" \
  org.opencontainers.image.source="${SOURCE}" \
  org.opencontainers.image.licenses="${LICENSES}"
ENV NODE_ENV=production
WORKDIR /app
# node_modules/@tollgate/gateway is a link to ../../gateway, which the next lines fill in.
COPY --from=deps /app/node_modules node_modules/
COPY --from=deps /app/gateway/node_modules gateway/node_modules/
COPY --from=deps /app/operator/node_modules operator/node_modules/
COPY package.json ./
COPY gateway/package.json gateway/
COPY gateway/src gateway/src/
COPY operator/package.json operator/
COPY operator/src operator/src/
USER 1000:1000
EXPOSE 8081
CMD ["node", "operator/src/main.ts"]
