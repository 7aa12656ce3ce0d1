"""AWS credentials for the "iam" option, in the efs-utils 1.36 order; the source is recorded in
the state file (awsCredentialsMethod) so the watchdog can fetch them again."""

import configparser
import json
import logging
import os
import pwd
from typing import Mapping, Optional, Tuple

from . import linklocal
from .certificate import Credentials
from .errors import FatalError
from .imds import IMDS

ROLE_SESSION_NAME = "efs-mount-helper"
IMDS_CREDS_PATH = "/latest/meta-data/iam/security-credentials/"

log = logging.getLogger(__name__)


def _home() -> str:
    return pwd.getpwuid(os.getuid()).pw_dir


def _from_ini(path: str, section: str) -> Optional[Credentials]:
    p = configparser.ConfigParser(interpolation=None)
    try:
        if not p.read(path):
            return None
    except configparser.Error as e:
        log.warning("cannot parse %s: %s", path, e)
        return None
    if not p.has_section(section):
        return None
    s = p[section]
    if s.get("aws_access_key_id") and s.get("aws_secret_access_key"):
        return Credentials(s["aws_access_key_id"], s["aws_secret_access_key"], s.get("aws_session_token"))
    return None


def profile_files(profile: str, home: Optional[str] = None) -> Tuple[Optional[Credentials], str]:
    """profile_files reads ~/.aws/credentials then ~/.aws/config (root's home; the AWS_* file
    variables are ignored, as in 1.36)."""
    home = home or _home()
    creds = _from_ini(os.path.join(home, ".aws", "credentials"), profile)
    if creds:
        return creds, "credentials:" + profile
    section = profile if profile == "default" else "profile " + profile
    creds = _from_ini(os.path.join(home, ".aws", "config"), section)
    if creds:
        return creds, "config:" + profile
    return None, ""


def default_profile(home: Optional[str] = None) -> Optional[str]:
    """default_profile is "default" when root's files hold [default] keys, else None."""
    creds, _ = profile_files("default", home)
    return "default" if creds else None


def _named_profile(profile: str) -> Credentials:
    try:
        import botocore.session
    except ImportError:
        raise FatalError('AWS profile "%s" has no keys in ~/.aws; assuming its role needs botocore, which is '
                         "not installed" % profile) from None
    try:
        frozen = botocore.session.Session(profile=profile).get_credentials().get_frozen_credentials()
    except Exception as e:  # botocore raises many types here
        raise FatalError('Cannot get credentials of AWS profile "%s": %s' % (profile, e)) from None
    return Credentials(frozen.access_key, frozen.secret_key, frozen.token)


def _http_json(url: str, timeout: float = 3.0) -> dict:
    return json.loads(linklocal.request(url, timeout=timeout).decode("utf-8"))


def ecs(uri: str, endpoint: str) -> Credentials:
    try:
        data = _http_json(endpoint + uri)
        return Credentials(data["AccessKeyId"], data["SecretAccessKey"], data.get("Token"))
    except (OSError, ValueError, KeyError) as e:
        raise FatalError("Unsuccessful retrieval of AWS security credentials at %s%s: %s" % (endpoint, uri, e)) \
            from None


def sts_endpoint(region: str, env: Mapping[str, str], suffix: str = "amazonaws.com") -> str:
    return (env.get("AWS_ENDPOINT_URL_STS") or env.get("AWS_ENDPOINT_URL")
            or "https://sts.%s.%s" % (region, suffix)).rstrip("/")


def web_identity(role_arn: str, token_file: str, region: str, env: Mapping[str, str]) -> Credentials:
    """web_identity calls STS AssumeRoleWithWebIdentity as a plain HTTPS GET (no botocore)."""
    import urllib.error
    import urllib.parse
    import urllib.request
    try:
        with open(token_file) as f:
            token = f.read().strip()
    except OSError as e:
        raise FatalError("Cannot read web identity token file %s: %s" % (token_file, e.strerror)) from None
    query = urllib.parse.urlencode({"Version": "2011-06-15", "Action": "AssumeRoleWithWebIdentity",
                                    "RoleArn": role_arn, "RoleSessionName": ROLE_SESSION_NAME,
                                    "WebIdentityToken": token})
    req = urllib.request.Request(sts_endpoint(region, env) + "/?" + query, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            body = resp.read().decode("utf-8")
    except (OSError, urllib.error.URLError) as e:
        raise FatalError("AssumeRoleWithWebIdentity for %s failed: %s" % (role_arn, e)) from None
    return parse_sts_response(body)


def parse_sts_response(body: str) -> Credentials:
    """parse_sts_response reads the Credentials of an AssumeRoleWithWebIdentity answer (JSON or XML)."""
    import xml.etree.ElementTree as ET
    try:
        if body.lstrip().startswith("<"):
            root = ET.fromstring(body)
            found = {el.tag.split("}")[-1]: (el.text or "") for el in root.iter()}
            return Credentials(found["AccessKeyId"], found["SecretAccessKey"], found.get("SessionToken"))
        c = json.loads(body)["AssumeRoleWithWebIdentityResponse"]["AssumeRoleWithWebIdentityResult"]["Credentials"]
        return Credentials(c["AccessKeyId"], c["SecretAccessKey"], c.get("SessionToken"))
    except (ValueError, KeyError, TypeError, ET.ParseError) as e:
        raise FatalError("Unexpected AssumeRoleWithWebIdentity response: %s" % e) from None


def instance_role(imds: IMDS) -> Optional[Credentials]:
    role = imds.get(IMDS_CREDS_PATH)
    if not role:
        return None
    body = imds.get(IMDS_CREDS_PATH + role.strip().splitlines()[0])
    try:
        data = json.loads(body or "")
        return Credentials(data["AccessKeyId"], data["SecretAccessKey"], data.get("Token"))
    except (ValueError, KeyError):
        return None


def get(region: str, imds: IMDS, ecs_endpoint: str, env: Mapping[str, str],
        awscredsuri: Optional[str] = None, awsprofile: Optional[str] = None,
        role_arn: Optional[str] = None, jwt_path: Optional[str] = None,
        home: Optional[str] = None) -> Tuple[Credentials, str]:
    """get returns (credentials, awsCredentialsMethod) from the first source that has them."""
    if awscredsuri:
        return ecs(awscredsuri, ecs_endpoint), "ecs:" + awscredsuri
    with_role = bool(role_arn and jwt_path)
    # AWS_PROFILE names the profile when the mount has no awsprofile option (as newer efs-utils releases read it;
    # 1.36 does not): the driver's controller sets it so that its own mounts use the credentials the AWS SDK
    # variables give it (AWS_CONFIG_FILE, read by botocore for a profile without keys in ~/.aws).
    profile = None if with_role else (awsprofile or env.get("AWS_PROFILE") or default_profile(home))
    if profile:
        creds, source = profile_files(profile, home)
        if creds:
            return creds, source
        return _named_profile(profile), "named_profile:" + profile
    rel = env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
    if rel:
        return ecs(rel, ecs_endpoint), "ecs:" + rel
    if with_role:
        return web_identity(role_arn, jwt_path, region, env), "webidentity:%s,%s" % (role_arn, jwt_path)
    if env.get("AWS_ROLE_ARN") and env.get("AWS_WEB_IDENTITY_TOKEN_FILE"):
        arn, path = env["AWS_ROLE_ARN"], env["AWS_WEB_IDENTITY_TOKEN_FILE"]
        return web_identity(arn, path, region, env), "webidentity:%s,%s" % (arn, path)
    creds = instance_role(imds)
    if creds:
        return creds, "metadata:"
    raise FatalError("AWS Access Key ID and Secret Access Key are not found in AWS credentials file (%s), "
                     "config file, ECS credentials, web identity or instance metadata"
                     % os.path.join(home or _home(), ".aws", "credentials"))


def refetch(method: str, region: str, imds: IMDS, ecs_endpoint: str, env: Mapping[str, str],
            home: Optional[str] = None) -> Credentials:
    """refetch gets credentials again from the source a state file recorded (watchdog renewal)."""
    kind, _, arg = method.partition(":")
    if kind in ("credentials", "config", "named_profile"):
        creds, _ = get(region, imds, ecs_endpoint, env, awsprofile=arg, home=home)
        return creds
    if kind == "ecs":
        return ecs(arg, ecs_endpoint)
    if kind == "webidentity":
        arn, _, path = arg.partition(",")
        return web_identity(arn, path, region, env)
    if kind == "metadata":
        creds = instance_role(imds)
        if creds:
            return creds
    raise FatalError('Cannot refresh AWS credentials from "%s"' % method)
