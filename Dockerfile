# Gatehouse: the production build (npm run build) on plain node, as a non-root user.
# docker build -t gatehouse . && docker run -p 8787:8787 -v gatehouse-data:/data gatehouse

# Build stage: all dependencies (TypeScript included), compile to dist/, then drop the dev ones.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles its native module when no prebuilt one can be fetched.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY schema ./schema
COPY rest ./rest
COPY console ./console
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Run stage: the compiled code and production dependencies only.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8787 \
    DATABASE_URL=sqlite:/data/gatehouse.sqlite
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# SQLite's file and the generated secret key live in /data (a volume), owned by the node user.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8787
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8787) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Signals reach node directly (exec form): SIGTERM drains in-flight requests, then exits 0.
# --max-semi-space-size=64: a larger young generation (README, "Production build and deployment").
CMD ["node", "--max-semi-space-size=64", "dist/server.js"]
