# Tollgate: one image for every component (`tollgate gateway`, `tollgate operator`).
# Node 24 runs the TypeScript sources directly (type stripping), so the build stage only
# installs production dependencies: the same `npm ci` the README and CI run, without dev tools.

FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

FROM node:24-slim
LABEL org.opencontainers.image.title="tollgate" \
      org.opencontainers.image.description="OpenAI-compatible LLM gateway for Kubernetes: routers, providers, budgets, usage, cost and carbon" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/tollgate-dev/tollgate"
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY gateway ./gateway
COPY operator ./operator
COPY crds ./crds
COPY examples ./examples
USER node
EXPOSE 8080
ENTRYPOINT ["node", "/app/gateway/cli.ts"]
CMD ["gateway", "--config", "/app/examples/config.yaml"]
