#!/usr/bin/env python3
"""The comparison half of scripts/bench: Apple's official Python library
(app-store-server-library) on the same JWS and receipts the Swift bench measured.

JWS go through SignedDataVerifier.verify_and_decode_signed_transaction with the simulator's
root as the only root certificate and online (OCSP) checks off, which is how the library
verifies offline; receipts through ReceiptUtility.extract_transaction_id_from_app_receipt.
Prints `name: value` lines.
"""
import argparse
import time

from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.receipt_utility import ReceiptUtility
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier


def lines(path, count):
    with open(path) as handle:
        return [line.strip() for line in handle if line.strip()][:count]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True, help="the simulator's root certificate, DER")
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--jws", required=True, help="signed transactions, one per line")
    parser.add_argument("--jws-count", type=int, default=2000)
    parser.add_argument("--receipts", required=True, help="base64 app receipts, one per line")
    parser.add_argument("--receipt-count", type=int, default=1000)
    arguments = parser.parse_args()

    with open(arguments.root, "rb") as handle:
        root = handle.read()
    # Production requires an appAppleId, which transactions are not checked against.
    verifier = SignedDataVerifier([root], False, Environment.PRODUCTION, arguments.bundle, 1234567890)
    tokens = lines(arguments.jws, arguments.jws_count)
    wall, cpu = time.perf_counter(), time.process_time()
    for token in tokens:
        verifier.verify_and_decode_signed_transaction(token)
    report("apple_python_jws_verifications", len(tokens), wall, cpu)

    utility = ReceiptUtility()
    receipts = lines(arguments.receipts, arguments.receipt_count)
    wall, cpu = time.perf_counter(), time.process_time()
    for receipt in receipts:
        if utility.extract_transaction_id_from_app_receipt(receipt) is None:
            raise SystemExit("ReceiptUtility found no transaction in a bench receipt")
    report("apple_python_receipt_parses", len(receipts), wall, cpu)


def report(name, count, wall_start, cpu_start):
    """Rates per wall second and per CPU second (this process), as the Swift side reports them."""
    wall = time.perf_counter() - wall_start
    cpu = time.process_time() - cpu_start
    print(f"{name}_per_second_wall: {count / wall:.0f}", flush=True)
    print(f"{name}_per_cpu_second: {count / cpu:.0f}", flush=True)


if __name__ == "__main__":
    main()
