"""The built-in secret list (issue 11.6): every ecosystem's credential files are secret, ordinary source
and configuration files are not, every line of the list has an example here, the home credentials the
sandbox masks are secrets too, and the fast path of the matcher agrees with plain gitignore matching."""

from __future__ import annotations

from pathlib import Path

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ls.core.errors import PathRefused
from agent_ls.workspace.paths import DEFAULT_SECRET_PATTERNS, PathPolicy, is_secret
from agent_ls.workspace.secret_files import (
    CREDENTIALS_ADVICE,
    ENV_ADVICE,
    GIT_ADVICE,
    HOME_CREDENTIALS,
    KEY_ADVICE,
    SECRET_GROUPS,
    SSH_ADVICE,
    STATE_ADVICE,
)
from agent_ls.workspace.secret_match import fold

# (workspace-relative path, what the refusal advises); at least one example for every built-in line.
CREDENTIAL_FILES = [
    # environment files
    (".env", ENV_ADVICE),
    ("config/.env.production", ENV_ADVICE),
    ("deploy/db.env", ENV_ADVICE),
    ("deploy/db.env~", ENV_ADVICE),
    ("deploy/#db.env#", ENV_ADVICE),
    ("deploy/.db.env.swp", ENV_ADVICE),
    # private keys and key containers
    ("certs/server.pem", KEY_ADVICE),
    ("keys/id_rsa", KEY_ADVICE),
    ("keys/id_ed25519.pub", KEY_ADVICE),
    ("keys/id_ecdsa_sk", KEY_ADVICE),
    ("keys/id_dsa", KEY_ADVICE),
    ("config/master.key", KEY_ADVICE),
    ("signing/release.p12", KEY_ADVICE),
    ("signing/release.pfx", KEY_ADVICE),
    ("signing/bundle.pkcs12", KEY_ADVICE),
    ("AuthKey_ABC123.p8", KEY_ADVICE),
    ("build/target/product/security/platform.pk8", KEY_ADVICE),
    ("android/app/release.jks", KEY_ADVICE),
    ("android/debug.keystore", KEY_ADVICE),
    ("server.jceks", KEY_ADVICE),
    ("trust.bks", KEY_ADVICE),
    ("deploy/putty.ppk", KEY_ADVICE),
    ("src/Lib/Key.snk", KEY_ADVICE),
    ("vault.kdbx", KEY_ADVICE),
    ("ci/build.keychain", KEY_ADVICE),
    ("ci/login.keychain-db", KEY_ADVICE),
    ("old/secring.gpg", KEY_ADVICE),
    ("home/.gnupg/private-keys-v1.d/x.key", KEY_ADVICE),
    ("android/keystore.properties", KEY_ADVICE),
    ("android/key.properties", KEY_ADVICE),
    # version control
    (".git/config", GIT_ADVICE),
    (".git/worktrees/main/config.worktree", GIT_ADVICE),
    ("vendored/.hg/hgrc", GIT_ADVICE),
    (".git-credentials", CREDENTIALS_ADVICE),
    ("home/.config/git/credentials", CREDENTIALS_ADVICE),
    (".netrc", CREDENTIALS_ADVICE),
    ("_netrc", CREDENTIALS_ADVICE),
    ("home/.hgrc", CREDENTIALS_ADVICE),
    ("home/.subversion/auth/svn.simple/abc", CREDENTIALS_ADVICE),
    ("home/.config/gh/hosts.yml", CREDENTIALS_ADVICE),
    ("home/.config/hub", CREDENTIALS_ADVICE),
    ("home/.config/glab-cli/config.yml", CREDENTIALS_ADVICE),
    ("home/.authinfo", CREDENTIALS_ADVICE),
    ("home/.authinfo.gpg", CREDENTIALS_ADVICE),
    ("home/.password-store/email.gpg", CREDENTIALS_ADVICE),
    # package registries
    (".npmrc", CREDENTIALS_ADVICE),
    ("node/etc/npmrc", CREDENTIALS_ADVICE),
    (".yarnrc.yml", CREDENTIALS_ADVICE),
    ("home/.pypirc", CREDENTIALS_ADVICE),
    ("docker/pip.conf", CREDENTIALS_ADVICE),
    ("pip.ini", CREDENTIALS_ADVICE),
    ("home/.config/pypoetry/auth.toml", CREDENTIALS_ADVICE),
    ("home/.gem/credentials", CREDENTIALS_ADVICE),
    ("home/.local/share/gem/credentials", CREDENTIALS_ADVICE),
    (".bundle/config", CREDENTIALS_ADVICE),
    ("home/.cargo/credentials", CREDENTIALS_ADVICE),
    ("home/.cargo/credentials.toml", CREDENTIALS_ADVICE),
    ("auth.json", CREDENTIALS_ADVICE),
    ("home/.composer/auth.json", CREDENTIALS_ADVICE),
    ("home/.config/composer/auth.json", CREDENTIALS_ADVICE),
    ("home/.nuget/NuGet/NuGet.Config", CREDENTIALS_ADVICE),
    ("home/.config/NuGet/NuGet.Config", CREDENTIALS_ADVICE),
    ("home/.gradle/gradle.properties", CREDENTIALS_ADVICE),
    ("home/.m2/settings.xml", CREDENTIALS_ADVICE),
    ("settings-security.xml", CREDENTIALS_ADVICE),
    ("home/.config/dart/pub-credentials.json", CREDENTIALS_ADVICE),
    ("home/.config/dart/pub-tokens.json", CREDENTIALS_ADVICE),
    ("home/.pub-cache/credentials.json", CREDENTIALS_ADVICE),
    # containers and clusters
    ("home/.docker/config.json", CREDENTIALS_ADVICE),
    ("home/.dockercfg", CREDENTIALS_ADVICE),
    ("home/.config/containers/auth.json", CREDENTIALS_ADVICE),
    ("home/.kube/config", CREDENTIALS_ADVICE),
    ("deploy/kubeconfig", CREDENTIALS_ADVICE),
    ("deploy/kubeconfig.yaml", CREDENTIALS_ADVICE),
    ("deploy/staging.kubeconfig", CREDENTIALS_ADVICE),
    ("home/.config/helm/repositories.yaml", CREDENTIALS_ADVICE),
    ("home/.config/helm/registry/config.json", CREDENTIALS_ADVICE),
    # cloud command-line tools
    (".aws/credentials", CREDENTIALS_ADVICE),
    (".aws/config", CREDENTIALS_ADVICE),
    (".azure/dev/.env", ENV_ADVICE),  # both match; the environment file's advice comes first
    (".azure/msal_token_cache.json", CREDENTIALS_ADVICE),
    ("home/.microsoft/usersecrets/1234/secrets.json", CREDENTIALS_ADVICE),
    ("home/.config/gcloud/credentials.db", CREDENTIALS_ADVICE),
    ("home/.config/gcloud/access_tokens.db", CREDENTIALS_ADVICE),
    ("keys/application_default_credentials.json", CREDENTIALS_ADVICE),
    ("credentials.json", CREDENTIALS_ADVICE),
    ("client_secret_1234.apps.googleusercontent.com.json", CREDENTIALS_ADVICE),
    ("keys/service-account-prod.json", CREDENTIALS_ADVICE),
    ("keys/service_account.json", CREDENTIALS_ADVICE),
    ("keys/serviceAccountKey.json", CREDENTIALS_ADVICE),
    ("home/.oci/config", CREDENTIALS_ADVICE),
    ("home/.config/doctl/config.yaml", CREDENTIALS_ADVICE),
    ("home/.s3cfg", CREDENTIALS_ADVICE),
    ("home/.boto", CREDENTIALS_ADVICE),
    ("home/.config/rclone/rclone.conf", CREDENTIALS_ADVICE),
    ("home/.pulumi/credentials.json", CREDENTIALS_ADVICE),
    ("home/.fly/config.yml", CREDENTIALS_ADVICE),
    ("home/.vault-token", CREDENTIALS_ADVICE),
    ("ansible/.vault_pass", CREDENTIALS_ADVICE),
    ("ansible/.vault-password.txt", CREDENTIALS_ADVICE),
    ("home/.pgpass", CREDENTIALS_ADVICE),
    ("home/.my.cnf", CREDENTIALS_ADVICE),
    ("home/.mylogin.cnf", CREDENTIALS_ADVICE),
    ("public/.htpasswd", CREDENTIALS_ADVICE),
    # infrastructure state and variables
    ("infra/terraform.tfstate", STATE_ADVICE),
    ("infra/terraform.tfstate.backup", STATE_ADVICE),
    ("infra/terraform.tfstate.d/prod/terraform.tfstate", STATE_ADVICE),
    ("infra/prod.tfvars", STATE_ADVICE),
    ("infra/prod.auto.tfvars", STATE_ADVICE),
    ("infra/prod.tfvars.json", STATE_ADVICE),
    ("infra/release.tfplan", STATE_ADVICE),
    ("home/.terraformrc", STATE_ADVICE),
    ("terraform.rc", STATE_ADVICE),
    ("home/.terraform.d/credentials.tfrc.json", STATE_ADVICE),
    # the home
    ("backup/.ssh/known_hosts", SSH_ADVICE),
]

ORDINARY_FILES = [
    "src/app.py",
    "package.json",
    "config.json",
    "tsconfig.json",
    ".envrc",
    ".env.example",
    "config.env.ts",
    "settings.xml",
    ".mvn/settings.xml",
    "gradle.properties",
    "android/gradle.properties",
    "nuget.config",
    "NuGet.Config",
    "composer.json",
    "public/locales/en/auth.json",
    "src/containers/auth.json",
    "pkg/kubeconfig.go",
    "pkg/kubeconfig_test.go",
    "docker/config.json",
    ".docker/Dockerfile",
    "infra/main.tf",
    "infra/terraform.tfvars.example",
    "src/keys.py",
    "src/credentials.py",
    "docs/tokens.md",
    ".pre-commit-config.yaml",
    ".npmignore",
    ".yarnrc",
    "certifi/cacert.pem",
]


@pytest.fixture
def policy(tmp_path: Path) -> PathPolicy:
    root = tmp_path / "ws"
    root.mkdir()
    return PathPolicy(root, home=tmp_path / "home")


@pytest.mark.parametrize(("rel", "advice"), CREDENTIAL_FILES)
def test_credential_files_are_refused_with_their_advice(policy: PathPolicy, rel: str, advice: str) -> None:
    assert is_secret(rel)
    with pytest.raises(PathRefused) as caught:
        policy.resolve(rel)
    assert str(caught.value) == f"refused: {rel!r} {advice}"
    check = policy.check(rel, write=True)
    assert (check.verdict, check.secret) == ("deny", True)


@pytest.mark.parametrize("rel", ORDINARY_FILES)
def test_ordinary_source_and_configuration_files_stay_readable(policy: PathPolicy, rel: str) -> None:
    assert not is_secret(rel)
    assert policy.resolve(rel) == rel


def test_every_line_of_the_list_has_an_example() -> None:
    examples = [fold(rel) for rel, _ in CREDENTIAL_FILES]
    missing = []
    for line in DEFAULT_SECRET_PATTERNS:
        if line.startswith(("!", "/", "~")):
            continue  # re-includes, and the absolute lines (tested with a home and /proc elsewhere)
        spec = pathspec.GitIgnoreSpec.from_lines([fold(line)])
        if not any(spec.match_file(example) for example in examples):
            missing.append(line)
    assert missing == []


def test_composer_auth_json_is_secret_at_a_root_only(policy: PathPolicy, tmp_path: Path) -> None:
    assert policy.check("auth.json", write=False).secret
    assert not policy.check("packages/api/lang/auth.json", write=False).secret
    outside = tmp_path / "elsewhere" / "auth.json"
    assert not policy.check(str(outside), write=False).secret
    assert policy.check(str(tmp_path / "home" / ".composer" / "auth.json"), write=False).secret


@pytest.mark.parametrize("name", [n for n in HOME_CREDENTIALS if n != ".docker"])
def test_every_home_credential_the_sandbox_masks_is_a_secret(
    policy: PathPolicy, tmp_path: Path, name: str
) -> None:
    check = policy.check(str(tmp_path / "home" / name.replace("*", "v22")), write=False)
    assert (check.verdict, check.secret) == ("deny", True), check.reason


def test_the_podman_runtime_file_is_secret(policy: PathPolicy) -> None:
    check = policy.check("/run/user/1000/containers/auth.json", write=False)
    assert (check.verdict, check.secret) == ("deny", True)


def _reference(rel: str) -> str | None:
    """The advice by plain gitignore matching of each built-in group, on every tail of the path."""
    for group in SECRET_GROUPS:
        if group.lines[0].startswith(("/", "~")):
            continue
        lines = ["/" + line for line in group.lines] if group.rooted else group.lines
        if pathspec.GitIgnoreSpec.from_lines([fold(line) for line in lines]).match_file(fold(rel)):
            return group.advice
    return None


NAMES = st.sampled_from(
    [
        "src", "lib", "a.py", ".env", ".env.example", "db.env", "x.pem", "cacert.pem", "certifi", "pip",
        "_vendor", ".git", "config", "modules", ".cargo", "credentials", "credentials.toml", ".aws",
        "auth.json", ".composer", ".config", "gcloud", "NuGet", ".nuget", "NuGet.Config", "id_rsa.pub",
        ".npmrc", "npmrc", "etc", "kubeconfig", "kubeconfig.go", "x.tfstate", "y.tfvars.example", ".m2",
        "settings.xml", "containers", "#a.env#", ".Env", "ＣＲＥＤＥＮＴＩＡＬＳ.json", ".gradle",
        "gradle.properties",
    ]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(NAMES, min_size=1, max_size=5))
def test_the_fast_path_agrees_with_plain_matching(parts: list[str]) -> None:
    rel = "/".join(parts)
    check = CHECKER.check(rel, write=False)
    advice = _reference(rel)
    assert (check.secret, check.reason) == (
        (True, f"{rel} {advice}") if advice is not None else (False, f"{rel} is inside the workspace")
    )


CHECKER = PathPolicy(Path("/nonexistent-root"), home=Path("/nonexistent-home"))
