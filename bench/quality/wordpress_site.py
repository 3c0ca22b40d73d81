"""A WordPress 6.1 blog (Debian's `wordpress` package) on its own MariaDB server, served by our own
Apache httpd with mod_php, for the quality harness (issue 23 item 7; standard library only).

  setup DIR --pages N --port P [--port2 P2] --host H --log LOG  (P2: a second Listen port)
        a MariaDB data directory in DIR/mysql (mariadb-install-db; the server listens on a socket in DIR
        only, no TCP, no system service), DIR/wp-config.php (Debian's wp-config.php reads
        /etc/wordpress/config-dustquality.php, written once by install.sh, which requires the file named
        by the DUST_WP_CONFIG variable that our httpd.conf sets), wp_install(), pretty permalinks
        /%year%/%monthnum%/%postname%/ (https://wordpress.org/documentation/article/customize-permalinks/),
        N posts (one per installed package) with 3-5 revisions each, a category (the package's section),
        tags, threaded comments (so comment reply links carry ?replytocom=) and a few pages; posts link
        each other by permalink and sometimes by their short link ?p=ID / ?page_id=ID.
        And DIR/apache/httpd.conf with WordPress's documented rewrite rules
        (https://wordpress.org/documentation/article/htaccess/).
  edit DIR --round R
        rounds 1 and 2 (between the traffic runs): some posts get a new revision, a post is added,
        a few posts and comments are deleted; round 3 (after the logs were written, before validation)
        does the same on more posts.
  db-start DIR / db-stop DIR
        the blog's own mysqld (run.py starts it before Apache and stops it after).
Deterministic: seeded (the texts come from this machine's packages).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import content  # noqa: E402

WP = Path("/usr/share/wordpress")
USERS = ("alice", "bob", "carol", "dave")
PASSWORD = "Quality-harness-1"
COMMENTERS = ("Eve", "Frank", "Grace", "Heidi", "Ivan", "Judy")

PHP = r"""<?php
$spec = json_decode(file_get_contents($argv[1]), true);
$_SERVER['HTTP_HOST'] = $spec['host'];
$_SERVER['SERVER_NAME'] = $spec['host'];
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['WORDPRESS_CONFIG'] = 'dustquality';
$_SERVER['DUST_WP_CONFIG'] = $spec['config'];
if ($spec['op'] === 'install') { define('WP_INSTALLING', true); }
require '/usr/share/wordpress/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-admin/includes/taxonomy.php';

function post_id($slug) { $p = get_page_by_path($slug, OBJECT, 'post'); return $p ? $p->ID : 0; }

function add_posts($spec, $users) {
    $ids = [];
    foreach ($spec['posts'] as $p) {
        $cats = [];
        foreach ($p['categories'] as $c) { $cats[] = wp_create_category($c); }
        $id = wp_insert_post(['post_title' => $p['title'], 'post_name' => $p['slug'], 'post_content' => $p['revisions'][0],
            'post_status' => 'publish', 'post_date' => $p['date'], 'post_author' => $users[$p['author']],
            'post_category' => $cats, 'tags_input' => $p['tags'], 'comment_status' => 'open'], true);
        if (is_wp_error($id)) { fwrite(STDERR, $id->get_error_message() . "\n"); exit(1); }
        foreach (array_slice($p['revisions'], 1) as $text) { wp_update_post(['ID' => $id, 'post_content' => $text]); }
        $cids = [];
        foreach ($p['comments'] as $c) {
            $cids[] = wp_insert_comment(['comment_post_ID' => $id, 'comment_author' => $c['author'],
                'comment_author_email' => strtolower($c['author']) . '@example.org', 'comment_content' => $c['text'],
                'comment_parent' => $c['parent'] >= 0 ? $cids[$c['parent']] : 0, 'comment_approved' => 1,
                'comment_date' => $c['date'], 'comment_date_gmt' => $c['date']]);
        }
        $ids[$p['slug']] = $id;
    }
    // "see also": links to other posts by permalink, a third of them by short link (?p=ID)
    foreach ($spec['posts'] as $p) {
        $html = "\n<h2>See also</h2>\n<ul>\n";
        foreach ($p['see'] as $i => $s) {
            if (!isset($ids[$s]) && !post_id($s)) { continue; }
            $other = isset($ids[$s]) ? $ids[$s] : post_id($s);
            $href = $i % 3 == 2 ? home_url('/?p=' . $other) : get_permalink($other);
            $html .= '<li><a href="' . esc_url($href) . '">' . esc_html(get_the_title($other)) . "</a></li>\n";
        }
        $id = $ids[$p['slug']];
        wp_update_post(['ID' => $id, 'post_content' => get_post($id)->post_content . $html . "</ul>\n"]);
    }
    return $ids;
}

$users = [];
if ($spec['op'] === 'install') {
    wp_install($spec['title'], 'admin', 'admin@example.org', true, '', $spec['password']);
    foreach ($spec['users'] as $u) {
        $users[$u] = wp_insert_user(['user_login' => $u, 'user_pass' => $spec['password'], 'role' => 'author',
                                     'display_name' => ucfirst($u), 'user_email' => $u . '@example.org']);
    }
    update_option('posts_per_page', 10);
    update_option('thread_comments', 1);
    update_option('page_comments', 1);
    update_option('comments_per_page', 4);
    update_option('default_comment_status', 'open');
    update_option('blogdescription', 'Notes on the packages of this machine');
    global $wp_rewrite;
    $wp_rewrite->set_permalink_structure($spec['permalinks']);
    $wp_rewrite->flush_rules(false);
    add_posts($spec, $users);
    $parent = 0;
    foreach ($spec['pages'] as $i => $pg) {
        $pid = wp_insert_post(['post_title' => $pg['title'], 'post_content' => $pg['text'], 'post_type' => 'page',
                               'post_status' => 'publish', 'post_parent' => $i % 3 == 2 ? $parent : 0]);
        if ($i % 3 == 0) { $parent = $pid; }
    }
    wp_delete_post(1, true);  // "Hello world!"
    wp_delete_post(2, true);  // "Sample Page"
    // the blog's index pages, as a theme's widgets would show them: categories, monthly archives,
    // authors, a few searches, and short links (?cat=, ?page_id=) as people paste them
    $html = "<ul>\n";
    foreach (get_categories(['hide_empty' => true]) as $i => $c) {
        $href = $i % 4 == 3 ? home_url('/?cat=' . $c->term_id) : get_category_link($c->term_id);
        $html .= '<li><a href="' . esc_url($href) . '">' . esc_html($c->name) . "</a></li>\n";
    }
    $sections = get_page_by_path('sections');
    wp_update_post(['ID' => $sections->ID, 'post_content' => "<p>The sections of this blog.</p>\n" . $html . "</ul>\n"]);
    $html = "<ul>\n";
    global $wpdb;
    foreach ($wpdb->get_results("SELECT DISTINCT YEAR(post_date) AS y, MONTH(post_date) AS m FROM $wpdb->posts WHERE post_type = 'post' AND post_status = 'publish' ORDER BY y, m") as $r) {
        $html .= '<li><a href="' . esc_url(get_month_link($r->y, $r->m)) . '">' . $r->y . '-' . $r->m . "</a></li>\n";
    }
    foreach ($spec['users'] as $u) {
        $html .= '<li><a href="' . esc_url(get_author_posts_url($users[$u])) . '">' . ucfirst($u) . "</a></li>\n";
    }
    foreach ($spec['searches'] as $i => $w) {
        $href = $i % 2 ? home_url('/search/' . rawurlencode($w) . '/') : home_url('/?s=' . rawurlencode($w));
        $html .= '<li><a href="' . esc_url($href) . '">search: ' . esc_html($w) . "</a></li>\n";
    }
    foreach (get_pages() as $pg) {
        $html .= '<li><a href="' . esc_url(home_url('/?page_id=' . $pg->ID)) . '">' . esc_html($pg->post_title) . "</a></li>\n";
    }
    $notes = get_page_by_path('archive-notes');
    wp_update_post(['ID' => $notes->ID, 'post_content' => "<p>Archives.</p>\n" . $html . "</ul>\n"]);
} else {
    foreach ($spec['users'] as $u) { $users[$u] = get_user_by('login', $u)->ID; }
    foreach ($spec['update'] as $slug => $extra) {
        $id = post_id($slug);
        if ($id) { wp_update_post(['ID' => $id, 'post_content' => get_post($id)->post_content . $extra]); }
    }
    add_posts($spec, $users);
    foreach ($spec['delete'] as $slug) { $id = post_id($slug); if ($id) { wp_delete_post($id, true); } }
    $all = get_comments(['status' => 'approve', 'orderby' => 'comment_ID', 'order' => 'ASC']);
    foreach ($all as $i => $c) { if ($i % $spec['comment_every'] == 0) { wp_delete_comment($c->comment_ID, true); } }
}
echo json_encode(['posts' => (int) wp_count_posts()->publish, 'comments' => (int) wp_count_comments()->approved]), "\n";
"""


def sock(root: Path) -> Path:
    return root / "mysql" / "mysqld.sock"


def db_start(root: Path) -> None:
    if sock(root).exists():
        return
    user = ["--user=root"] if os.geteuid() == 0 else []
    log = open(root / "mysqld.err", "a")
    subprocess.Popen(["/usr/sbin/mariadbd", "--no-defaults", f"--datadir={root / 'mysql' / 'data'}",
                      f"--socket={sock(root)}", f"--pid-file={root / 'mysql' / 'mysqld.pid'}", "--skip-networking",
                      "--skip-log-bin", "--innodb-buffer-pool-size=64M", "--max-connections=60", *user],
                     stdout=log, stderr=log, start_new_session=True)
    for _ in range(300):
        if sock(root).exists():
            return
        time.sleep(0.2)
    raise SystemExit(f"mariadbd did not start: {(root / 'mysqld.err').read_text()[-2000:]}")


def db_stop(root: Path) -> None:
    pid_file = root / "mysql" / "mysqld.pid"
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text().strip())
    os.kill(pid, signal.SIGTERM)
    for _ in range(300):
        if not pid_file.exists():
            return
        time.sleep(0.2)
    os.kill(pid, signal.SIGKILL)


def wp(root: Path, spec: dict) -> str:
    (root / "spec.json").write_text(json.dumps(spec))
    (root / "op.php").write_text(PHP)
    r = subprocess.run(["php", str(root / "op.php"), str(root / "spec.json")], capture_output=True, text=True,
                       cwd=root)
    if r.returncode != 0 or not r.stdout.strip().endswith("}"):
        raise SystemExit(f"wordpress {spec['op']} failed ({r.returncode}): {r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r.stdout.strip().splitlines()[-1]


def slug_of(p: content.Package) -> str:
    return p.name.replace("+", "plus").replace(".", "-").lower()


def post_html(p: content.Package, rev: int) -> str:
    words = p.description.split()
    cut = len(words) * (rev + 2) // (rev + 3)
    changes = "".join(f"<h3>{v}</h3>\n<pre>{t[:700]}</pre>\n" for v, _, t in p.changes[: rev + 1])
    changes = changes.replace("&", "&amp;").replace("<pre>", "<pre>", 1)
    return (f"<p><strong>{p.name}</strong> {p.version}: {p.summary}.</p>\n<p>{' '.join(words[:cut])}</p>\n"
            + (f"<h2>Recent changes</h2>\n{changes}" if changes else ""))


def comments(p: content.Package, when: datetime, rnd: random.Random) -> list[dict]:
    out: list[dict] = []
    words = [w for w in p.description.split() if w.isalpha()] or ["fine"]
    for i in range(rnd.choice((0, 1, 2, 3, 5, 7))):
        when += timedelta(hours=rnd.randint(1, 200))
        out.append({"author": rnd.choice(COMMENTERS), "date": f"{when:%Y-%m-%d %H:%M:%S}",
                    "parent": rnd.randrange(i) if i and rnd.random() < 0.4 else -1,
                    "text": f"Does {p.name} still {' '.join(rnd.sample(words, min(4, len(words))))}?"})
    return out


def posts(pkgs: list[content.Package], rnd: random.Random, start: datetime, all_slugs: list[str]) -> list[dict]:
    out = []
    for p in pkgs:
        when = start + timedelta(hours=rnd.randrange(24 * 400))
        tags = sorted({w.lower().strip(".,()") for w in p.summary.split() if len(w) > 4 and w.isalpha()})[:3]
        out.append({"title": p.name, "slug": slug_of(p), "date": f"{when:%Y-%m-%d %H:%M:%S}",
                    "author": rnd.choice(USERS), "categories": [p.section], "tags": tags,
                    "revisions": [post_html(p, k) for k in range(rnd.randint(3, 5))],
                    "comments": comments(p, when, rnd),
                    "see": rnd.sample([s for s in all_slugs if s != slug_of(p)], min(3, len(all_slugs) - 1))})
    return out


def setup(a: argparse.Namespace) -> None:
    root = Path(a.dir).resolve()
    if root.exists():
        shutil.rmtree(root)
    (root / "mysql").mkdir(parents=True)
    user = ["--user=root"] if os.geteuid() == 0 else []
    r = subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={root / 'mysql' / 'data'}",
                        "--auth-root-authentication-method=normal", "--skip-test-db", *user],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"mariadb-install-db failed: {r.stdout[-2000:]}{r.stderr[-2000:]}")
    db_start(root)
    try:
        subprocess.run(["mariadb", f"--socket={sock(root)}", "-uroot", "-e", "CREATE DATABASE wordpress"], check=True)
        (root / "wp-config.php").write_text(f"""<?php
define('DB_NAME', 'wordpress');
define('DB_USER', 'root');
define('DB_PASSWORD', '');
define('DB_HOST', 'localhost:{sock(root)}');
define('WP_HOME', 'http://{a.host}:{a.port}');
define('WP_SITEURL', 'http://{a.host}:{a.port}');
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_DEBUG', false);
foreach (['AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT', 'SECURE_AUTH_SALT',
          'LOGGED_IN_SALT', 'NONCE_SALT'] as $k) {{ define($k, 'bench-quality-' . $k); }}
$table_prefix = 'wp_';
""")
        rnd = random.Random(a.seed)
        pkgs = content.packages(limit=a.pages, seed=a.seed)
        slugs = [slug_of(p) for p in pkgs]
        pages = [{"title": t, "text": f"<p>{p.description}</p>"} for t, p in
                 zip(("About", "Sections", "Licences", "Contact", "Archive notes", "Mirrors"), pkgs)]
        out = wp(root, {"op": "install", "host": f"{a.host}:{a.port}", "config": str(root / "wp-config.php"),
                        "title": "Quality Blog", "password": PASSWORD, "users": USERS,
                        "permalinks": "/%year%/%monthnum%/%postname%/", "pages": pages,
                        "searches": ["library", "python", "daemon", "nothing-matches-this"],
                        "posts": posts(pkgs, rnd, datetime(2024, 1, 1), slugs)})
    finally:
        db_stop(root)
    (root / "posts.txt").write_text("\n".join(slugs) + "\n")
    (root / "site.json").write_text(json.dumps({"host": f"{a.host}:{a.port}"}))
    apache_conf(root, a.port, a.host, Path(a.log).resolve(), port2=a.port2)
    print(f"wordpress: {out} in {root}", file=sys.stderr)


def edit(a: argparse.Namespace) -> None:
    root = Path(a.dir).resolve()
    rnd = random.Random(a.seed * 1000 + a.round)
    slugs = (root / "posts.txt").read_text().split()
    gone = set((root / "deleted.txt").read_text().split()) if (root / "deleted.txt").exists() else set()
    live = [s for s in slugs if s not in gone]
    extra = content.packages(limit=30, seed=a.seed + 17 * a.round)
    n = max(3, len(live) * (15 if a.round == 3 else 6) // 100)
    changed = rnd.sample(live, min(n, len(live)))
    update = {s: f"\n<h2>Update {a.round}</h2>\n<p>{rnd.choice(extra).description[:600]}</p>\n" for s in changed}
    rest = [s for s in live if s not in changed]
    deleted = rnd.sample(rest, min(max(2, len(live) * (8 if a.round == 3 else 2) // 100), len(rest)))
    new = [p for p in extra if slug_of(p) not in slugs][:1]
    started = not sock(root).exists()
    db_start(root)
    try:
        out = wp(root, {"op": "edit", "host": json.loads((root / "site.json").read_text())["host"],
                        "config": str(root / "wp-config.php"), "users": USERS, "update": update, "delete": deleted,
                        "comment_every": 9 if a.round == 3 else 25,
                        "posts": posts(new, rnd, datetime(2026, 1, 1) + timedelta(days=30 * a.round), live)})
    finally:
        if started:
            db_stop(root)
    with open(root / "deleted.txt", "a", encoding="utf-8") as fh:
        fh.write("\n".join(deleted) + "\n")
    with open(root / "posts.txt", "a", encoding="utf-8") as fh:
        fh.write("".join(slug_of(p) + "\n" for p in new))
    print(f"wordpress: round {a.round}: {len(changed)} posts edited, {len(new)} added, {len(deleted)} deleted; {out}", file=sys.stderr)


def apache_conf(root: Path, port: int, host: str, log: Path, connect: str = "127.0.0.1", port2: int = 0) -> Path:
    run = root / "apache"
    run.mkdir(parents=True, exist_ok=True)
    mods = "/usr/lib/apache2/modules"
    user = "User www-data\nGroup www-data\n" if os.geteuid() == 0 else ""
    conf = run / "httpd.conf"
    conf.write_text(f"""# generated by bench/quality/wordpress_site.py
ServerRoot "{run}"
DefaultRuntimeDir "{run}"
PidFile "{run}/httpd.pid"
Mutex file:{run} default
Listen {connect}:{port}
{f"Listen {connect}:{port2}" if port2 else ""}
ServerName {host}
{user}LoadModule mpm_prefork_module {mods}/mod_mpm_prefork.so
LoadModule authz_core_module {mods}/mod_authz_core.so
LoadModule dir_module {mods}/mod_dir.so
LoadModule mime_module {mods}/mod_mime.so
LoadModule alias_module {mods}/mod_alias.so
LoadModule env_module {mods}/mod_env.so
LoadModule rewrite_module {mods}/mod_rewrite.so
LoadModule php_module {mods}/libphp8.2.so
TypesConfig /etc/mime.types
StartServers 2
MinSpareServers 2
MaxSpareServers 6
MaxRequestWorkers 8
ErrorLog "{run}/error.log"
LogFormat "%{{Host}}i %h %l %u %t \\"%r\\" %>s %O \\"%{{Referer}}i\\" \\"%{{User-Agent}}i\\"" host_combined
CustomLog "{log}" host_combined
UseCanonicalName Off
SetEnv WORDPRESS_CONFIG dustquality
SetEnv DUST_WP_CONFIG "{root / 'wp-config.php'}"
DocumentRoot "{WP}"
Alias /wp-content "/var/lib/wordpress/wp-content"
<Directory />
    AllowOverride None
    Require all denied
</Directory>
<Directory "/var/lib/wordpress/wp-content">
    Options FollowSymLinks
    Require all granted
</Directory>
<Directory "{WP}">
    Options FollowSymLinks
    AllowOverride None
    DirectoryIndex index.php
    Require all granted
    <FilesMatch "\\.php$">
        SetHandler application/x-httpd-php
    </FilesMatch>
    RewriteEngine On
    RewriteBase /
    RewriteRule ^index\\.php$ - [L]
    RewriteCond %{{REQUEST_FILENAME}} !-f
    RewriteCond %{{REQUEST_FILENAME}} !-d
    RewriteRule . /index.php [L]
</Directory>
""")
    return conf


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("setup")
    s.add_argument("dir")
    s.add_argument("--pages", type=int, default=200)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--port2", type=int, default=0, help="a second port the site answers on (0: none)")
    s.add_argument("--host", required=True)
    s.add_argument("--log", required=True)
    s.add_argument("--seed", type=int, default=1)
    e = sub.add_parser("edit")
    e.add_argument("dir")
    e.add_argument("--round", type=int, required=True)
    e.add_argument("--seed", type=int, default=1)
    for name in ("db-start", "db-stop"):
        sub.add_parser(name).add_argument("dir")
    a = ap.parse_args()
    if a.cmd in ("db-start", "db-stop"):
        (db_start if a.cmd == "db-start" else db_stop)(Path(a.dir).resolve())
        return
    {"setup": setup, "edit": edit}[a.cmd](a)


if __name__ == "__main__":
    main()
