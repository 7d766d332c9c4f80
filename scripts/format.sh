#!/usr/bin/env bash
# Formats the Swift sources with the repository's .swift-format (4 spaces, 120 columns, ordered imports).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
swift-format format --in-place --recursive --parallel Package.swift Sources Tests Benchmarks Fuzz
