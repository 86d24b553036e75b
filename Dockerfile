# syntax=docker/dockerfile:1
# The broker and proxy images that deploy/kubernetes runs:
#   docker build -t queen .                              (the broker, with queenctl beside it)
#   docker build --target queen-proxy -t queen-proxy .
# The binaries are static (CGO off: Go's own DNS resolver, no libc to match), so the runtime image is
# distroless static, running as uid 65532 as the manifests' securityContext expects. The broker image
# holds no PostgreSQL: set DATABASE_URL (without it the broker stops, saying that none is configured).
FROM golang:1.26-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# No .git in the context (.dockerignore): the binaries report commit "unknown" in `version`.
RUN go build -trimpath -buildvcs=false -o /out/queen ./cmd/queen \
 && go build -trimpath -buildvcs=false -o /out/queen-proxy ./cmd/queen-proxy \
 && go build -trimpath -buildvcs=false -o /out/queenctl ./cmd/queenctl \
 && mkdir -p /out/spool

FROM gcr.io/distroless/static-debian12:nonroot AS queen-proxy
COPY --from=build /out/queen-proxy /usr/local/bin/queen-proxy
USER 65532:65532
EXPOSE 6634
ENTRYPOINT ["/usr/local/bin/queen-proxy"]

# The default target, last. The spool directory exists and belongs to the broker's user, so that a run
# without a volume still spools (into the container's layer, lost with the container: mount a volume
# there, one per broker, as deploy/kubernetes/broker.yaml does).
FROM gcr.io/distroless/static-debian12:nonroot AS queen
COPY --from=build /out/queen /out/queenctl /usr/local/bin/
COPY --from=build --chown=65532:65532 /out/spool /var/lib/queen/spool
ENV FILE_BUFFER_DIR=/var/lib/queen/spool
USER 65532:65532
EXPOSE 6632
ENTRYPOINT ["/usr/local/bin/queen"]
CMD ["serve"]
