# syntax=docker/dockerfile:1
# The gateway image. Node 24 runs the TypeScript sources directly (type stripping), so the gateway needs no
# build; only the console (static files the gateway serves) is built, in a stage of its own.
#
#   docker build -f deploy/gateway.Dockerfile -t tollgate/gateway:0.1.0 .      (from the repository root)
#
# The Helm chart runs `node gateway/src/main.ts` (the gateway) and `node gateway/src/migrate.ts` (the
# migration Job) from /app, as user 1000 with a read-only root filesystem and a writable /tmp.
ARG NODE_IMAGE=node:24-slim

# Production dependencies of the gateway workspace only.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY gateway/package.json gateway/
COPY operator/package.json operator/
COPY console/package.json console/
RUN npm ci --omit=dev --workspace gateway --no-audit --no-fund \
  && mkdir -p gateway/node_modules

# The console's static build (console/dist).
FROM ${NODE_IMAGE} AS console
WORKDIR /app
COPY package.json package-lock.json ./
COPY gateway/package.json gateway/
COPY operator/package.json operator/
COPY console/package.json console/
RUN npm ci --workspace console --no-audit --no-fund
COPY console/ console/
RUN npm run build --workspace console

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules node_modules/
COPY --from=deps /app/gateway/node_modules gateway/node_modules/
COPY package.json ./
COPY gateway/package.json gateway/
COPY gateway/src gateway/src/
COPY --from=console /app/console/dist console/dist/
# The node user of the official image, by number so that runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 3000
CMD ["node", "gateway/src/main.ts"]
