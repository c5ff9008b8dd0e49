"""The built-in secret list: the files that hold secrets or credentials, in groups that say what to do
instead. ``secret_match`` compiles it; ``PathPolicy`` (read_file, grep, list_files, shell operands and
redirections), the instruction loaders (``@imports``), the shadow copy and the sandbox's masks all read
it through ``PathPolicy.is_secret``, and the sandbox masks ``HOME_CREDENTIALS`` under the user's home.

Each entry comes from the documentation of the tool that writes or reads the file; docs/permissions.md
("Secret files") has the table of entries and sources. What the list avoids: names that ordinary
projects use for source or plain configuration (``config.json``, ``settings.xml``, a project's
``gradle.properties`` or ``nuget.config``, ``.envrc``); those are caught only under the tool's own
folder (``.m2/settings.xml``, ``.gradle/gradle.properties``), where they hold the user's credentials.

Patterns are gitignore lines matched on folded paths (``secret_match.fold``): a line without ``/``
matches any path component (so a folder matches with everything under it), ``**/a/b`` matches ``a/b``
at any depth, a line starting with ``/`` or ``~/`` is absolute. A ``!`` line re-includes within its
own group only.
"""

from __future__ import annotations

from dataclasses import dataclass

ENV_ADVICE = "may hold secrets; ask the user for the values you need, or read .env.example"
KEY_ADVICE = "may be a private key; never read keys, ask the user about it instead"
GIT_ADVICE = "may hold credentials (remote URLs with tokens); ask the user for the setting you need"
SSH_ADVICE = "is SSH material; never read it, ask the user instead"
PROC_ADVICE = "holds a process's environment (API keys); never read it, ask the user instead"
CREDENTIALS_ADVICE = "may hold credentials (tokens, passwords); ask the user for the setting you need instead"
STATE_ADVICE = "may hold secrets (infrastructure state or variables); ask the user for the values you need"


@dataclass(frozen=True)
class SecretGroup:
    """One group of built-in secret patterns.

    Attributes:
        lines: gitignore lines (module docstring); a ``!`` line re-includes within this group only.
        advice: what the refusal tells the model to do instead.
        fixed: no exemption (``not_secret_files``) lifts the group.
        rooted: the lines match workspace-relative paths at the root of a workspace folder only (a
            file that a tool reads there alone, like Composer's project ``auth.json``).
    """

    lines: tuple[str, ...]
    advice: str
    fixed: bool = False
    rooted: bool = False


# fmt: off
SECRET_GROUPS: tuple[SecretGroup, ...] = (
    # -- environment files (issue 5) --------------------------------------------------------------
    SecretGroup((".env",), ENV_ADVICE),
    # .env.example is the template without values; its "!" only takes it out of ".env.*".
    SecretGroup((".env.*", "!.env.example"), ENV_ADVICE),
    # Docker Compose's env_file convention (db.env, prod.env; OpenCode's default read rule is "*.env"
    # too) and editor copies of any of those: Emacs's backup "x.env~" and auto-save "#x.env#" ("\#":
    # a leading "#" would be a comment), Vim's swap ".x.env.swp" (".env.swp" is under ".env.*"). No
    # language uses ".env" as a source extension, so "*.env" does not hide code; "*.env.*" would
    # (config.env.ts), and is left out.
    SecretGroup(("*.env", "*.env~", "\\#*.env#", "*.env.sw?"), ENV_ADVICE),
    # -- private keys and key containers ----------------------------------------------------------
    # Public CA bundles are .pem files too (certifi's cacert.pem in every virtualenv): hiding them
    # breaks any TLS client a test creates, and they hold no secret.
    SecretGroup(("*.pem", "!**/certifi/cacert.pem", "!**/pip/_vendor/certifi/cacert.pem"), KEY_ADVICE),
    # ssh-keygen(1) FILES: the private keys of every key type (the .pub beside them is matched too).
    SecretGroup(("id_rsa*", "id_ed25519*", "id_ecdsa*", "id_dsa*"), KEY_ADVICE),
    SecretGroup(
        (
            "*.key",  # OpenSSL, nginx ssl_certificate_key, Rails config/master.key
            "*.p12", "*.pfx", "*.pkcs12",  # PKCS #12 (RFC 7292)
            "*.p8", "*.pk8",  # PKCS #8 private keys (Apple AuthKey_*.p8, Android platform.pk8)
            "*.jks", "*.keystore", "*.jceks", "*.bks",  # Java keytool and BouncyCastle keystores
            "*.ppk",  # PuTTY private keys
            "*.snk",  # .NET strong-name key pairs
            "*.kdbx",  # KeePass databases
            "*.keychain", "*.keychain-db",  # macOS keychains
            "secring.*", ".gnupg",  # GnuPG 1 secret keyring, GnuPG home
            "keystore.properties", "key.properties",  # Android and Flutter signing passwords
        ),
        KEY_ADVICE,
    ),
    # -- version control ---------------------------------------------------------------------------
    # A submodule's config lives under .git/modules/<name>/, a worktree's under .git/worktrees/.
    SecretGroup(("**/.git/**/config", "**/.git/**/config.worktree", "**/.hg/hgrc"), GIT_ADVICE),
    SecretGroup(
        (
            ".git-credentials", "**/.config/git/credentials",  # git-credential-store(1)
            ".netrc", "_netrc",  # netrc(5): curl, git, ftp, Heroku; _netrc on Windows
            ".hgrc",  # hgrc(5) [auth] section
            "**/.subversion/auth",  # Subversion's credential cache
            "**/.config/gh", "**/.config/hub", "**/.config/glab-cli",  # GitHub, GitLab CLIs
            ".authinfo", ".authinfo.gpg", ".password-store",  # Emacs auth-source, pass(1)
        ),
        CREDENTIALS_ADVICE,
    ),
    # -- package registries ------------------------------------------------------------------------
    SecretGroup(
        (
            ".npmrc", "**/etc/npmrc",  # npmrc: //registry/:_authToken; the global $PREFIX/etc/npmrc
            ".yarnrc.yml",  # Yarn 2+: npmAuthToken
            ".pypirc", "pip.conf", "pip.ini", "**/pypoetry/auth.toml",  # PyPA, pip, Poetry
            "**/.gem/credentials", "**/.local/share/gem/credentials",  # RubyGems API keys
            "**/.bundle/config",  # Bundler: BUNDLE_<HOST> credentials
            "**/.cargo/credentials", "**/.cargo/credentials.toml",  # cargo login
            "**/.composer/auth.json", "**/.config/composer/auth.json",  # Composer's global auth.json
            "**/.nuget/NuGet/NuGet.Config", "**/.config/NuGet/NuGet.Config",  # user-level NuGet
            "**/.gradle/gradle.properties",  # Gradle user home
            "**/.m2/settings.xml", "settings-security.xml",  # Maven servers and master password
            "pub-credentials.json", "pub-tokens.json", "**/.pub-cache/credentials.json",  # dart pub
        ),
        CREDENTIALS_ADVICE,
    ),
    # Composer reads a project's auth.json beside its composer.json, at the project root; elsewhere an
    # auth.json is as often a translation file (locales/en/auth.json), so only the root one is secret.
    SecretGroup(("auth.json",), CREDENTIALS_ADVICE, rooted=True),
    # -- containers and clusters --------------------------------------------------------------------
    SecretGroup(
        (
            "**/.docker/config.json", ".dockercfg",  # docker login
            "**/.config/containers/auth.json",  # podman, buildah, skopeo (containers-auth.json(5))
            ".kube", "kubeconfig", "kubeconfig.y*ml", "*.kubeconfig",  # kubectl (not kubeconfig.go)
            "**/.config/helm/repositories.yaml", "**/.config/helm/registry",  # Helm
        ),
        CREDENTIALS_ADVICE,
    ),
    # The podman login file's primary place ($XDG_RUNTIME_DIR): absolute lines form a group of their own.
    SecretGroup(("/run/user/*/containers/auth.json",), CREDENTIALS_ADVICE),
    # -- cloud command-line tools ------------------------------------------------------------------
    SecretGroup(
        (
            ".aws",  # AWS CLI: credentials, config, sso/cache
            ".azure", "**/.microsoft/usersecrets",  # Azure CLI and azd, .NET user secrets
            "**/.config/gcloud", "application_default_credentials.json",  # gcloud, Google ADC
            "credentials.json", "client_secret*.json",  # Google API OAuth client downloads
            "service-account*.json", "service_account*.json", "serviceaccount*.json",  # key files
            ".oci", "**/.config/doctl",  # Oracle Cloud, DigitalOcean
            ".s3cfg", ".boto", "rclone.conf",  # s3cmd, boto and gsutil, rclone
            "**/.pulumi/credentials.json", "**/.fly/config.yml",  # Pulumi, Fly.io
            ".vault-token", ".vault?pass*",  # HashiCorp Vault, Ansible vault password files
            ".pgpass", ".my.cnf", ".mylogin.cnf", ".htpasswd",  # PostgreSQL, MySQL, Apache
        ),
        CREDENTIALS_ADVICE,
    ),
    # -- infrastructure state and variables -------------------------------------------------------
    SecretGroup(
        (
            "*.tfstate", "*.tfstate.*",  # Terraform state and its backups: plain-text secrets
            "*.tfvars", "*.tfvars.json", "*.tfplan",  # variable values, saved plans
            ".terraformrc", "terraform.rc", "credentials.tfrc.json",  # Terraform CLI tokens
        ),
        STATE_ADVICE,
    ),
    # -- the user's home and other processes ------------------------------------------------------
    # A workspace holding a home directory (or a copy of one) shows it as a component.
    SecretGroup((".ssh",), SSH_ADVICE),
    # Never workspace files, so no fixture needs them: no exemption lifts these two.
    SecretGroup(("~/.ssh",), SSH_ADVICE, fixed=True),
    SecretGroup(("/proc/**/environ",), PROC_ADVICE, fixed=True),
)
# fmt: on
"""The built-in groups, in the order their advice is chosen when several match."""

DEFAULT_SECRET_PATTERNS: tuple[str, ...] = tuple(line for group in SECRET_GROUPS for line in group.lines)
"""Every built-in line, in order: secret files are denied for read and write alike. These always
apply: ``PathPolicy(secret_patterns=...)`` adds to them, and only ``not_secret`` (the user's
exemptions) takes paths out, never those of ``~/.ssh`` or ``/proc``."""

HOME_CREDENTIALS: tuple[str, ...] = (
    ".ssh", ".gnupg", ".netrc", ".git-credentials",
    ".aws", ".azure", ".config/gcloud", ".kube", ".docker",
    ".config/gh", ".config/hub", ".npmrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
    ".nvm/versions/node/*/etc/npmrc",
    ".config/git/credentials", ".hgrc", ".subversion/auth", ".config/glab-cli", ".authinfo",
    ".authinfo.gpg", ".password-store",
    ".yarnrc.yml", ".pip/pip.conf", ".config/pip/pip.conf", ".config/pypoetry/auth.toml", ".gem/credentials",
    ".local/share/gem/credentials", ".bundle/config", ".composer/auth.json", ".config/composer/auth.json",
    ".nuget/NuGet/NuGet.Config", ".config/NuGet/NuGet.Config", ".gradle/gradle.properties",
    ".m2/settings.xml", ".m2/settings-security.xml", ".pub-cache/credentials.json",
    ".config/dart/pub-credentials.json", ".config/dart/pub-tokens.json",
    ".dockercfg", ".config/containers/auth.json", ".config/helm/repositories.yaml", ".config/helm/registry",
    ".microsoft/usersecrets", ".oci", ".config/doctl", ".s3cfg", ".boto", ".config/rclone/rclone.conf",
    ".pulumi/credentials.json", ".fly/config.yml", ".vault-token", ".pgpass", ".my.cnf", ".mylogin.cnf",
    ".terraformrc", ".terraform.d/credentials.tfrc.json",
)  # fmt: skip
"""Where the tools above keep the user's own credentials, relative to the home (``*`` matches one path
component). The sandbox masks those that exist wherever they remain visible (``workspace.sandbox``);
each is secret by ``SECRET_GROUPS`` too, except the whole ``.docker`` folder, which the sandbox hides
with its plugins and contexts."""
