# syntax=docker/dockerfile:1
# Production image: `docker build -t fromagerie .` (deploy/compose.yaml builds it too).

# --- build: the compiler toolchain for better-sqlite3's addon, every dependency, tsc --------
FROM node:24-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# The SDK workspace (the developer CLI imports @fromagerie/sdk; the build compiles it first).
COPY packages/sdk/package.json packages/sdk/package.json
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.ts scripts/build.ts
COPY packages/sdk/tsconfig.json packages/sdk/tsconfig.build.json packages/sdk/
COPY packages/sdk/src packages/sdk/src
COPY src src
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# --- runtime: compiled code, production dependencies, seed data; no compiler, no sources ---
FROM node:24-bookworm-slim
# tini as PID 1: it forwards SIGTERM to Node (which drains and exits 0) and reaps zombies.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    CHEESE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/packages/sdk/package.json ./packages/sdk/package.json
COPY --from=build /app/packages/sdk/dist ./packages/sdk/dist
COPY seed ./seed
COPY bin ./bin
# The code is root's and read-only to the service; only DATA_DIR is the service user's.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# `healthcheck` exits 0 when this instance's /v2/health/ready answers 200.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "dist/cli/main.js", "healthcheck"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--max-semi-space-size=2", "dist/server.js"]
