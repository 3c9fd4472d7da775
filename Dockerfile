# The sqs-jobs worker image: `docker build -t sqs-jobs-worker .`
# Runs `sqs-jobs worker` as a non-root user with production dependencies only. On ECS the task
# definition turns on a minimal init (initProcessEnabled) so SIGTERM reaches the worker and
# children are reaped; with plain Docker, run it with `docker run --init`.

FROM node:26-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are here; the build runs below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY handlers ./handlers
RUN npm run build && npm prune --omit=dev

FROM node:26-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
ENTRYPOINT ["node", "dist/src/cli/main.js"]
CMD ["worker", "--jobs", "dist/handlers/index.js"]
