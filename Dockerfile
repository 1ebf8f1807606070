# The service image used by docker-compose.yml (migrate, api, worker). Two stages:
# - build: every dependency, then `npm run build` bundles the CLI into dist/ (tools/bundle.mjs);
# - runtime: the production dependencies only (`npm ci --omit=dev`: no PGlite, anvil, solc, esbuild nor tsx),
#   dist/, the bin shim and the one data file a migration reads; run as the unprivileged `node` user.
# The image needs Postgres (DATABASE_URL), Redis (REDIS_URL) and a chain (RPC_URL): the embedded start
# (`lsreport up` without them) is for a development install, and says so here.
# Install scripts are not run (--ignore-scripts): every binary (esbuild, msgpackr-extract) comes prebuilt in an
# optional dependency, and anvil's postinstall would download.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:20-bookworm-slim
ENV NODE_ENV=production DATA_DIR=/data HOST=0.0.0.0 PORT=8080
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY bin/lsreport.mjs bin/
COPY fixtures/fee-schedules.json fixtures/
COPY --from=build /app/dist/ dist/
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
# the API's /health on PORT; a worker's on WORKER_PORT when it is set (docker-compose.yml sets it for the worker only)
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.WORKER_PORT || process.env.PORT || 8080}/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/lsreport.mjs"]
CMD ["api"]
