"""The token signing secret: ``CELLWAR_SECRET``, else one generated once per data folder.

Without ``CELLWAR_SECRET`` the platform keeps a random secret in ``<data_dir>/secret``
(48 random bytes, URL-safe base64, file mode 0600). The first process that needs it
creates it atomically (written to a private temporary file, then hard-linked to its
name, which fails if another process got there first), so every gateway started on the
same data folder (``make run``, the cluster runner's two gateways) signs and checks
tokens with the same key, and a restart keeps every token valid.

A secret that is publicly known is refused wherever it comes from: the old default
``dev-secret-change-me``, ``change-me`` (the compose file's placeholder), an empty or
blank value and the others in :data:`KNOWN_DEFAULT_SECRETS`. Anyone can sign a token for
any seat with such a key (docs/hosting.md "Security and limits").
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

#: File name of the generated secret inside the data folder.
SECRET_FILE = "secret"
#: Random bytes of a generated secret (64 characters of URL-safe base64).
GENERATED_SECRET_BYTES = 48
#: Shortest secret accepted from the secret file (a generated one has 64 characters).
MIN_FILE_SECRET_CHARS = 32

#: Public defaults and placeholders (compared case-insensitively, spaces stripped): the
#: repository's own old default and compose placeholder, and the usual examples of
#: framework docs. A key anyone can read signs tokens for every seat.
KNOWN_DEFAULT_SECRETS: frozenset[str] = frozenset(
    {
        "",
        "dev-secret-change-me",
        "change-me",
        "changeme",
        "change_me",
        "change-this",
        "changethis",
        "secret",
        "secret-key",
        "secret_key",
        "secretkey",
        "your-secret-key",
        "your_secret_key",
        "mysecret",
        "my-secret",
        "dev-secret",
        "dev",
        "development",
        "password",
        "default",
        "test",
        "cellwar",
        "cellwar-secret",
        "insecure",
        "not-a-secret",
    }
)


class SecretError(RuntimeError):
    """The configured or stored secret cannot be used (a known default, an unreadable or
    too open secret file); the message says what to do."""


def is_known_default(secret: str) -> bool:
    """True when ``secret`` is a public default or placeholder (see
    :data:`KNOWN_DEFAULT_SECRETS`): such a key must never sign or accept a token."""
    return secret.strip().lower() in KNOWN_DEFAULT_SECRETS


def check_secret(secret: str, source: str) -> str:
    """``secret`` unchanged when it may sign tokens.

    Raises:
        SecretError: a known default, naming ``source`` (e.g. ``"CELLWAR_SECRET"``).
    """
    if is_known_default(secret):
        shown = repr(secret) if secret.strip() else "an empty value"
        raise SecretError(
            f"{source} is {shown}, a publicly known default: anyone could sign a token "
            "for any seat. Set CELLWAR_SECRET to a long random value (e.g. `python -c "
            "'import secrets; print(secrets.token_urlsafe(48))'`), or leave it unset so "
            "the platform generates one in its data folder."
        )
    return secret


def load_or_create_secret(data_dir: str | os.PathLike[str]) -> str:
    """The secret kept in ``<data_dir>/secret``, created (mode 0600) when absent.

    Safe when several processes start at once on one data folder: exactly one file is
    created and every process reads the same secret.

    Raises:
        SecretError: the file is readable by group or others, shorter than
            :data:`MIN_FILE_SECRET_CHARS`, a known default, or cannot be read or written.
    """
    folder = Path(data_dir)
    path = folder / SECRET_FILE
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            _create(path)
        return _read(path)
    except OSError as exc:
        raise SecretError(f"cannot read or create the secret file {path}: {exc}") from exc


def _create(path: Path) -> None:
    """Write a new secret under a private temporary name, then link it to ``path``; a
    process that loses the race keeps the winner's file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(secrets.token_urlsafe(GENERATED_SECRET_BYTES) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _read(path: Path) -> str:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise SecretError(
            f"the secret file {path} has mode {mode:04o}: other users could read it; "
            f"run `chmod 600 {path}`"
        )
    secret = path.read_text(encoding="ascii").strip()
    check_secret(secret, f"the secret file {path}")
    if len(secret) < MIN_FILE_SECRET_CHARS:
        raise SecretError(
            f"the secret file {path} holds {len(secret)} characters; at least "
            f"{MIN_FILE_SECRET_CHARS} are needed (delete it to have a new one generated)"
        )
    return secret


def resolve_secret(secret: str | None, data_dir: str | os.PathLike[str]) -> str:
    """The token signing key: ``secret`` (``CELLWAR_SECRET``) when set, else the data
    folder's generated one.

    Args:
        secret: the configured value; ``None`` means not set (an empty string is set,
            and refused).
        data_dir: the data folder (``CELLWAR_DATA_DIR``).

    Raises:
        SecretError: a known default set explicitly, or a bad secret file.
    """
    if secret is not None:
        return check_secret(secret, "CELLWAR_SECRET")
    return load_or_create_secret(data_dir)
