"""Creating an s3 target's bucket when the plan asks (``create_bucket: true``).

fio's http engine cannot create a bucket (it only PUTs, GETs and DELETEs objects), so this
is the one request storbench sends itself, through botocore (the AWS SDK's core, which signs
it): CreateBucket, path-style, at the target's endpoint and region, with the target's
credentials (storbench.hosts.s3creds, registered for redaction). botocore is imported only here,
only when a bucket is to be created.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.hosts import s3creds
from storbench.model.errors import PreflightError
from storbench.plan import s3keys

if TYPE_CHECKING:
    from storbench.plan import Target

#: Codes of a CreateBucket answer that mean the bucket is there and ours.
ALREADY_OURS = ("BucketAlreadyOwnedByYou",)


def create(t: Target) -> None:
    """Create ``t``'s bucket; PreflightError (what the service said, never a key) when it
    cannot be created."""
    import botocore.config
    import botocore.exceptions
    import botocore.session

    creds = s3creds.resolve(t.credentials, t.label)
    region = t.region or s3keys.DEFAULT_REGION
    config = botocore.config.Config(
        s3={"addressing_style": "path"},
        retries={"max_attempts": 2, "mode": "standard"},
        connect_timeout=10,
        read_timeout=30,
    )
    client = botocore.session.get_session().create_client(
        "s3",
        region_name=region,
        endpoint_url=t.endpoint,
        aws_access_key_id=creds.key_id,
        aws_secret_access_key=creds.secret,
        aws_session_token=creds.token,
        verify=not t.insecure,
        config=config,
    )
    request: dict[str, object] = {"Bucket": t.path}
    if region != "us-east-1":  # S3 wants the region named unless it is the default one
        request["CreateBucketConfiguration"] = {"LocationConstraint": region}
    where = f"{t.label} at {t.endpoint}"
    try:
        client.create_bucket(**request)
    except botocore.exceptions.ClientError as e:
        error = e.response.get("Error", {})
        code = str(error.get("Code", "?"))
        if code in ALREADY_OURS:
            return
        raise PreflightError(
            f"{where}: cannot create bucket {t.path!r} ({code}: {error.get('Message', '')})",
            fix="create it yourself, or use keys that may create buckets",
        ) from None
    except botocore.exceptions.BotoCoreError as e:
        raise PreflightError(
            f"{where}: cannot create bucket {t.path!r} ({e})",
            fix="check the endpoint (scheme, host, port) and that the service runs",
        ) from None
    finally:
        client.close()
