# The service image used by docker-compose.yml (api, worker, migrate). TypeScript runs through tsx: no build step.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
ENV DATA_DIR=/data
ENTRYPOINT ["node", "bin/lsreport.mjs"]
CMD ["api"]
