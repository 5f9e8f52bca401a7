# syntax=docker/dockerfile:1
# The operator image. Node 24 runs the TypeScript sources directly (type stripping): no build step. The
# operator imports the gateway's store and domain through the workspace package @tollgate/gateway, so the
# gateway's sources ship too (not its console).
#
#   docker build -f deploy/operator.Dockerfile -t tollgate/operator:0.1.0 .     (from the repository root)
#
# The Helm chart runs `node operator/src/main.ts` from /app, as user 1000 with a read-only root filesystem.
ARG NODE_IMAGE=node:24-slim

# Production dependencies of the operator workspace (and of the gateway workspace it depends on).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY gateway/package.json gateway/
COPY operator/package.json operator/
COPY console/package.json console/
RUN npm ci --omit=dev --workspace operator --no-audit --no-fund \
  && mkdir -p gateway/node_modules operator/node_modules

FROM ${NODE_IMAGE}
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
