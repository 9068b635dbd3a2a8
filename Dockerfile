# syntax=docker/dockerfile:1
# gpuops: one image for every role (ROLE=all|web|worker). Build: docker build -t gpuops .
# With podman/buildah build with --format docker: the OCI format has no HEALTHCHECK and drops it.
# The current Node.js LTS (26, LTS since October 2026) on Debian slim; pin another with
# --build-arg NODE_IMAGE=node:24-bookworm-slim. Both stages use the same image.
# Optional build secrets, mounted for npm ci only and never stored in a layer or the history:
#   npm_ca  a CA bundle npm must trust (a TLS-intercepting proxy): --secret id=npm_ca,src=ca.crt
#   npmrc   an .npmrc (another registry, its token):               --secret id=npmrc,src=.npmrc
# docs/deployment.md has the whole story, and scripts/image/build.sh an offline build with podman.
ARG NODE_IMAGE=node:26-trixie-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=npm_ca,required=false \
  --mount=type=secret,id=npmrc,target=/root/.npmrc,required=false \
  --mount=type=cache,target=/root/.npm \
  if [ -s /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi \
  && npm ci --no-audit --no-fund --prefer-offline
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# Compile, then drop the dev dependencies (TypeScript, tsx, vitest, Biome) from node_modules, and
# what no running process reads: type declarations, source maps, READMEs.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund \
  && rm -rf node_modules/@types \
  && find node_modules -type f \( -name '*.d.ts' -o -name '*.d.?ts' -o -name '*.map' -o -name '*.md' \) -delete

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production PORT=3000
WORKDIR /app
# tini as PID 1 forwards SIGTERM to node; fonts for the PNG charts (resvg is given font files).
RUN apt-get update && apt-get install -y --no-install-recommends fonts-dejavu-core tini \
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log
# The code belongs to root and is only readable by the process: it cannot rewrite itself. Nothing
# under /app is written at run time, so the root filesystem can be read-only (docs/deployment.md).
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.OPS_PORT||9090)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# On SIGTERM node stops taking requests and jobs, drains the workers (docs/operations.md) and exits 0.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/gpuops.js"]
CMD ["start"]
