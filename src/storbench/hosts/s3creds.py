"""An S3 target's credentials, found where the plan says (``credentials:``), never stored.

- ``env`` (the default): ``AWS_ACCESS_KEY_ID`` and ``AWS_SECRET_ACCESS_KEY`` (and
  ``AWS_SESSION_TOKEN``), else the profile ``$AWS_PROFILE`` (or ``default``) of the shared
  credentials file (``$AWS_SHARED_CREDENTIALS_FILE``, else ``~/.aws/credentials``), as the
  AWS SDKs look;
- ``profile:NAME``: that profile of the shared credentials file;
- ``file:PATH``: a file in that format (its ``default`` profile, or its only one).

The keys reach fio through its environment (the job file says ``${STORBENCH_S3_SECRET}``:
fio expands it, so the stored job file never holds them), and every secret found is given
to storbench.model.redact, which takes it out of whatever storbench stores or prints.
"""

from __future__ import annotations

import configparser
import os
from dataclasses import dataclass, field
from pathlib import Path

from storbench.model import redact
from storbench.model.errors import UserError

#: The environment variables fio's job file reads the keys from.
KEY_ID_VAR = "STORBENCH_S3_KEY_ID"
SECRET_VAR = "STORBENCH_S3_SECRET"
TOKEN_VAR = "STORBENCH_S3_TOKEN"


@dataclass(frozen=True)
class Credentials:
    key_id: str = field(repr=False)
    secret: str = field(repr=False)
    token: str | None = field(default=None, repr=False)
    source: str = ""  # where they came from, in words (never the keys)

    def env(self) -> dict[str, str]:
        """What fio's environment gets (its job file names these variables)."""
        out = {KEY_ID_VAR: self.key_id, SECRET_VAR: self.secret}
        return {**out, TOKEN_VAR: self.token} if self.token else out


def _shared_file() -> Path:
    given = os.environ.get("AWS_SHARED_CREDENTIALS_FILE")
    return Path(given).expanduser() if given else Path.home() / ".aws" / "credentials"


def _from_file(path: Path, profile: str | None, how: str) -> Credentials:
    fix = (
        "an AWS credentials file: `[default]` then `aws_access_key_id = ...` and "
        "`aws_secret_access_key = ...`"
    )
    parser = configparser.ConfigParser(interpolation=None)
    try:
        with open(path, encoding="utf-8") as f:
            parser.read_file(f)
    except FileNotFoundError:
        raise UserError(f"{how}: there is no credentials file {path}", fix=fix) from None
    except (OSError, UnicodeDecodeError, configparser.Error) as e:
        why = e.strerror if isinstance(e, OSError) else type(e).__name__
        raise UserError(
            f"{how}: cannot read the credentials file {path} ({why})", fix=fix
        ) from None
    sections = parser.sections()
    if profile is None:
        profile = "default" if "default" in sections or len(sections) != 1 else sections[0]
    if profile not in sections:
        known = ", ".join(sections) or "none"
        raise UserError(f"{how}: {path} has no profile {profile!r} (it has: {known})", fix=fix)
    sec = parser[profile]
    key_id, secret = sec.get("aws_access_key_id"), sec.get("aws_secret_access_key")
    if not key_id or not secret:
        raise UserError(
            f"{how}: profile {profile!r} of {path} lacks aws_access_key_id or "
            "aws_secret_access_key",
            fix=fix,
        )
    token = sec.get("aws_session_token") or None
    return _found(key_id.strip(), secret.strip(), token, f"profile {profile} of {path}")


def _found(key_id: str, secret: str, token: str | None, source: str) -> Credentials:
    for s in (key_id, secret, token):
        if s:
            redact.register(s)
    return Credentials(key_id, secret, token, source)


def resolve(spec: str | None, target: str = "the s3 target") -> Credentials:
    """The credentials ``spec`` (``credentials:``) names; UserError (naming where it looked,
    never a key) when there are none."""
    spec = (spec or "env").strip()
    how = f"{target}: credentials {spec}"
    if spec.startswith("profile:"):
        return _from_file(_shared_file(), spec.split(":", 1)[1].strip(), how)
    if spec.startswith("file:"):
        return _from_file(Path(spec.split(":", 1)[1].strip()).expanduser(), None, how)
    key_id = os.environ.get("AWS_ACCESS_KEY_ID", "").strip()
    secret = os.environ.get("AWS_SECRET_ACCESS_KEY", "").strip()
    if key_id and secret:
        token = os.environ.get("AWS_SESSION_TOKEN", "").strip() or None
        return _found(key_id, secret, token, "the environment (AWS_ACCESS_KEY_ID)")
    shared = _shared_file()
    if shared.exists():
        return _from_file(shared, os.environ.get("AWS_PROFILE") or None, how)
    raise UserError(
        f"{how}: no AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY in the environment and no {shared}",
        fix="export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or name a profile "
        "(`credentials: profile:NAME`) or a file (`credentials: file:PATH`)",
    )
