# Tollgate: one image for every component (`tollgate gateway`, `tollgate operator`, and later
# workers), the image the Helm chart (charts/tollgate) runs.
#
#   docker build --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD) -t tollgate .
#
# `npm run build` builds the Playground's web assets (dist/playground) and the server's
# JavaScript (dist/app: the TypeScript sources with their types stripped ahead of time, so the
# process does not load Node's type stripper, about 30 MB of RSS). Each RUN is a command of the
# README and CI: `npm ci`, `npm run build`, `npm ci --omit=dev`.

# 1. Build: every dependency (dev ones included), then the Playground's assets and dist/app.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
# Only the sources: copying the whole context would also bring in a local node_modules and dist/.
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY core ./core
COPY gateway ./gateway
COPY operator ./operator
COPY worker ./worker
RUN npm run build

# 2. Production dependencies only: no compiler, bundler or test tools reach the image.
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

# 3. The image: Node, production dependencies, the compiled server, CRDs, examples and the built Playground.
FROM node:24-slim
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="tollgate" \
      org.opencontainers.image.description="OpenAI-compatible LLM gateway for Kubernetes: routers, providers, budgets, usage, cost and carbon" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/tollgate-dev/tollgate" \
      org.opencontainers.image.documentation="https://github.com/tollgate-dev/tollgate/tree/main/docs" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY crds ./crds
COPY examples ./examples
COPY --from=build /app/dist/app ./dist/app
COPY --from=build /app/dist/playground ./dist/playground
# The image's `node` user, by number: Kubernetes can then check runAsNonRoot without a runAsUser.
# Nothing under /app is writable by it; the process needs no writable path (the chart mounts an
# emptyDir at /tmp and a read-only root filesystem).
USER 1000:1000
EXPOSE 8080
ENTRYPOINT ["node", "/app/dist/app/bin/tollgate.js"]
CMD ["gateway", "--config", "/app/examples/config.yaml"]
