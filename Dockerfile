# syntax=docker/dockerfile:1
# The kueue-fast controller as a container image: the wheel built in one
# stage, installed in a slim runtime that runs as a fixed non-root user.
#
#   docker build -t REGISTRY/kueue-fast:TAG .
#   docker push REGISTRY/kueue-fast:TAG
#   kueue-fast manifests deploy --image REGISTRY/kueue-fast:TAG | kubectl apply -f -
#
# The Deployment of `kueue-fast manifests deploy` runs it with runAsNonRoot,
# runAsUser/runAsGroup 65532 (the USER below; tests/controller/test_cli.py
# checks that they agree) and a read-only root filesystem.

ARG PYTHON_VERSION=3.11

# --- 1. build: the wheel (the C++ engine compiled here) and its dependencies' wheels
FROM python:${PYTHON_VERSION}-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --wheel-dir /wheels '.[controller]'

# --- 2. runtime: Python and the wheels, no compiler, no sources
FROM python:${PYTHON_VERSION}-slim
RUN groupadd --gid 65532 kueue-fast \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin kueue-fast
# the wheels are mounted from the build stage, not copied: no layer keeps them
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-index --find-links /wheels 'kueue-fast[controller]'
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
# numeric, so that the kubelet can verify runAsNonRoot
USER 65532:65532
ENTRYPOINT ["kueue-fast"]
CMD ["controller"]
