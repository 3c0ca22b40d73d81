#!/usr/bin/env bash
# Installs the two real applications of the quality harness (issue 10), idempotently:
#   * Trac 1.6, gunicorn and Sphinx from PyPI into their own virtualenv (default var/quality/venv),
#     kept apart from the project's .venv;
#   * Apache httpd from Debian (apt-get; needs root), git (Trac's repository browser).
# Usage: bash bench/quality/install.sh [VENV]
set -euo pipefail
VENV=${1:-var/quality/venv}
PY=${PY:-python3}
if [ ! -x "$VENV/bin/gunicorn" ] || [ ! -x "$VENV/bin/trac-admin" ] || [ ! -x "$VENV/bin/sphinx-build" ]; then
  mkdir -p "$(dirname "$VENV")"
  test -x "$VENV/bin/python" || "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q 'Trac==1.6' 'gunicorn>=22' 'sphinx>=7'
fi
need=()
command -v /usr/sbin/apache2 >/dev/null || need+=(apache2)
command -v git >/dev/null || need+=(git)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "install.sh: please install ${need[*]} (Debian packages; needs root)" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null
fi
echo "quality apps ready: $("$VENV/bin/python" -c 'import trac, gunicorn, sphinx; print("Trac", trac.__version__, "gunicorn", gunicorn.__version__, "Sphinx", sphinx.__version__)'); $(/usr/sbin/apache2 -v | head -1)"
