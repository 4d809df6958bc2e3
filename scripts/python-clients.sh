#!/usr/bin/env bash
# Makes the Python environment the client tests drive: a venv at .data/python-clients with the
# pinned client libraries (openai, langchain-openai, litellm) from PyPI. It is made again only when
# the requirements change. Prints the venv's python.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
requirements=services/gateway/src/client-sdks/python/requirements.txt
venv=.data/python-clients
python=${PYTHON:-python3}
# shellcheck source=../deploy/local/lib.sh
source deploy/local/lib.sh

# Debian's python3 comes without venv and pip: those are packages of their own.
if ! command -v "$python" >/dev/null 2>&1; then
  need_apt_package python3
  need_apt_package python3-venv
elif ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
  need_apt_package python3-venv
fi
apt_install_missing
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' || {
  echo "python3 >= 3.9 is needed for the Python client tests (found $("$python" --version))" >&2
  exit 1
}

stamp=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$venv"
  mkdir -p .data
  "$python" -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --require-virtualenv -r "$requirements" >&2
  echo "$stamp" > "$venv/.requirements"
fi
echo "$PWD/$venv/bin/python"
