#!/usr/bin/env bash
# Installs the two real applications of the quality harness (issue 10), idempotently:
#   * Trac 1.6, gunicorn and Sphinx from PyPI into their own virtualenv (default var/quality/venv),
#     kept apart from the project's .venv;
#   * Apache httpd from Debian (apt-get; needs root), git (Trac's repository browser);
#   * MediaWiki 1.39 (Debian `mediawiki`, SQLite through php-sqlite3) and WordPress 6.1 (Debian
#     `wordpress`, MariaDB `mariadb-server`) with PHP under Apache (libapache2-mod-php). The harness
#     runs its own Apache and its own mysqld (temp datadir, loopback); no system service is started
#     or enabled here (Debian's policy-rc.d decides; the harness never uses the system's instances).
#     QUALITY_NO_PHP_APPS=1 leaves these out.
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
if [ -z "${QUALITY_NO_PHP_APPS:-}" ]; then
  for pkg in mediawiki php-sqlite3 libapache2-mod-php wordpress mariadb-server php-mysql; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
  done
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "install.sh: please install ${need[*]} (Debian packages; needs root)" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null
fi
if [ -z "${QUALITY_NO_PHP_APPS:-}" ] && [ ! -f /etc/wordpress/config-dustquality.php ]; then
  # Debian's wordpress reads its configuration from /etc/wordpress/config-<name>.php only
  # (/usr/share/doc/wordpress/README.Debian); <name> comes from `SetEnv WORDPRESS_CONFIG dustquality`
  # in the harness's own httpd.conf, and this file hands over to that run's wp-config.php.
  if [ "$(id -u)" != 0 ]; then
    echo "install.sh: please create /etc/wordpress/config-dustquality.php as root (see install.sh)" >&2
    exit 1
  fi
  cat > /etc/wordpress/config-dustquality.php <<'PHP'
<?php
/* bench/quality/install.sh: the dustbuster quality harness's WordPress sites (one per run, on loopback) */
if (!empty($_SERVER['DUST_WP_CONFIG']) && is_readable($_SERVER['DUST_WP_CONFIG'])) {
    require $_SERVER['DUST_WP_CONFIG'];
}
PHP
fi
echo "quality apps ready: $("$VENV/bin/python" -c 'import trac, gunicorn, sphinx; print("Trac", trac.__version__, "gunicorn", gunicorn.__version__, "Sphinx", sphinx.__version__)'); $(/usr/sbin/apache2 -v | head -1)"
if [ -z "${QUALITY_NO_PHP_APPS:-}" ]; then
  echo "php apps: $(dpkg-query -W -f='mediawiki ${Version}, ' mediawiki)$(dpkg-query -W -f='wordpress ${Version}, ' wordpress)$(dpkg-query -W -f='mariadb-server ${Version}' mariadb-server)"
fi
