"""What a service-account token costs the secure port's authentication.

A real API server (embedded store, in this process and loop), a ServiceAccount and a Pod
created through it, then the guard's service-account authenticator
(apiserver/serviceaccount/authenticator.py) timed directly, four ways:

  sign          TokenSigner.sign of a TokenRequest's claims (RS256, what TokenRequest pays)
  first         authenticate() of a token never seen: RS256 verification + the account read
  repeat        authenticate() of the same token again: the verified-token cache + the
                account read from the store (the promise: <= 50 us)
  repeat+pod    the same for a pod-bound token (one more store read)
  verify-cached TokenVerifier.verify alone on a cached token (the cache's own cost)

Each figure is the median (and p90) over N calls after a warm-up.

    /work/main/.venv-test/bin/python -m bench.satokens [--n 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from minikube_py.apiserver.options import APIServerOptions
from minikube_py.apiserver.server import APIServer
from minikube_py.apiserver.serviceaccount.claims import new_claims
from minikube_py.serviceaccount_keys import new_private_key_pem
from minikube_py.storage import EmbeddedStore

ISSUER = "https://kubernetes.default.svc.cluster.local"


def _stats(samples: list[float]) -> str:
    samples.sort()
    med = statistics.median(samples) * 1e6
    p90 = samples[int(len(samples) * 0.9)] * 1e6
    return f"median {med:8.1f} us   p90 {p90:8.1f} us"


async def _time_async(n: int, call: Callable[[], Awaitable[Any]]) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        await call()
        out.append(time.perf_counter() - t)
    return out


def _time(n: int, call: Callable[[], Any]) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        call()
        out.append(time.perf_counter() - t)
    return out


async def main(n: int) -> None:
    logging.disable(logging.CRITICAL)
    with tempfile.TemporaryDirectory() as tmp:
        key = Path(tmp) / "sa.key"
        key.write_bytes(new_private_key_pem())
        store = await EmbeddedStore.open(Path(tmp) / "data", fsync=False)
        server = APIServer(store, APIServerOptions(
            service_account_issuer=ISSUER, service_account_signing_key_file=str(key),
            scheduler_health_url="http://127.0.0.1:1/healthz",
            controller_manager_health_url="http://127.0.0.1:1/healthz"))
        await server.start()
        try:
            sas = server.registries["", "v1", "serviceaccounts"]
            pods = server.registries["", "v1", "pods"]
            account = await sas.create("default", {"metadata": {"name": "robot"}})
            pod = await pods.create("default", {"metadata": {"name": "p"}, "spec": {
                "serviceAccountName": "robot", "containers": [{"name": "c", "image": "x"}]}})
            config = server.tokens
            assert config is not None and config.signer is not None
            guard = server.guard
            assert guard is not None and guard.service_accounts is not None
            authn = guard.service_accounts
            now = int(time.time())

            def claims(**kw: Any) -> dict[str, Any]:
                return new_claims(ISSUER, account, [ISSUER], now, 3600, **kw)

            signer = config.signer
            print(f"sign          {_stats(_time(max(n // 10, 50), lambda: signer.sign(claims())))}")
            fresh = [signer.sign(claims()) for _ in range(max(n // 10, 50))]
            it = iter(fresh)
            first = await _time_async(len(fresh), lambda: authn.authenticate(next(it)))
            print(f"first         {_stats(first)}")
            token = signer.sign(claims())
            bound = signer.sign(claims(pod=pod))
            for t in (token, bound):
                assert await authn.authenticate(t) is not None
            print(f"repeat        {_stats(await _time_async(n, lambda: authn.authenticate(token)))}")
            print(f"repeat+pod    {_stats(await _time_async(n, lambda: authn.authenticate(bound)))}")
            verifier = config.verifier
            print(f"verify-cached {_stats(_time(n, lambda: verifier.verify(token)))}")
        finally:
            await server.stop()
            await store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    asyncio.run(main(parser.parse_args().n))
