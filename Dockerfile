# syntax=docker/dockerfile:1
# gpuops: one image for every role (ROLE=all|web|worker). Build: docker build -t gpuops .
# The current Node.js LTS (26, LTS since October 2026) on Debian slim; pin another with
# --build-arg NODE_IMAGE=node:24-bookworm-slim. Both stages use the same image.
ARG NODE_IMAGE=node:26-trixie-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# Compile, then drop the dev dependencies (TypeScript, tsx, vitest, Biome) from node_modules.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production PORT=3000
WORKDIR /app
# tini as PID 1 forwards SIGTERM to node; fonts for the PNG charts (resvg is given font files).
RUN apt-get update && apt-get install -y --no-install-recommends fonts-dejavu-core tini \
  && rm -rf /var/lib/apt/lists/*
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node bin ./bin
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.OPS_PORT||9090)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# On SIGTERM node stops taking requests and jobs, drains the workers (docs/operations.md) and exits 0.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/gpuops.js"]
CMD ["start"]
