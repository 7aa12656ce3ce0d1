"""Drives the standalone fakeaws program with real botocore; prints one JSON object with what it saw.

Usage: botocore_check.py URL SUBNET_ID ZONE
"""
import json
import sys
import time

import botocore.session
from botocore.exceptions import ClientError


def main():
    url, subnet, zone = sys.argv[1], sys.argv[2], sys.argv[3]
    session = botocore.session.get_session()
    kw = dict(region_name="us-east-1", endpoint_url=url,
              aws_access_key_id="AKIABOTOCORETEST0001", aws_secret_access_key="secret")
    efs = session.create_client("efs", **kw)
    ec2 = session.create_client("ec2", **kw)
    sts = session.create_client("sts", **kw)
    out = {"botocore": botocore.__version__}

    fs = efs.create_file_system(CreationToken="botocore-check", AvailabilityZoneName=zone,
                                Tags=[{"Key": "Name", "Value": "bc"}])
    fs_id = fs["FileSystemId"]
    out["fileSystemId"] = fs_id
    out["createState"] = fs["LifeCycleState"]
    for _ in range(50):
        desc = efs.describe_file_systems(FileSystemId=fs_id)["FileSystems"][0]
        if desc["LifeCycleState"] == "available":
            break
        time.sleep(0.1)
    out["describedZoneId"] = desc.get("AvailabilityZoneId")
    try:
        efs.create_file_system(CreationToken="botocore-check")
    except ClientError as e:
        out["fsExistsCode"] = e.response["Error"]["Code"]

    mt = efs.create_mount_target(FileSystemId=fs_id, SubnetId=subnet)
    mts = efs.describe_mount_targets(FileSystemId=fs_id)["MountTargets"]
    out["mountTargetIp"] = mt["IpAddress"]
    out["mountTargets"] = [[m["MountTargetId"], m["AvailabilityZoneName"], m["AvailabilityZoneId"],
                            m["IpAddress"], m["LifeCycleState"]] for m in mts]

    zones = ec2.describe_availability_zones(ZoneNames=[zone])["AvailabilityZones"]
    out["zones"] = [[z["ZoneName"], z["ZoneId"]] for z in zones]
    filtered = ec2.describe_availability_zones(
        Filters=[{"Name": "zone-id", "Values": [desc["AvailabilityZoneId"]]}])["AvailabilityZones"]
    out["filteredZones"] = [z["ZoneName"] for z in filtered]
    try:
        ec2.describe_availability_zones(ZoneNames=["us-east-1z"])
    except ClientError as e:
        out["badZoneCode"] = e.response["Error"]["Code"]

    params = dict(ClientToken="bc-token", FileSystemId=fs_id, PosixUser={"Uid": 1000, "Gid": 1000},
                  RootDirectory={"Path": "/bc", "CreationInfo": {"OwnerUid": 1000, "OwnerGid": 1000,
                                                                 "Permissions": "0755"}})
    ap = efs.create_access_point(**params)
    out["accessPointId"] = ap["AccessPointId"]
    try:
        efs.create_access_point(**params)
    except ClientError as e:
        out["apExistsCode"] = e.response["Error"]["Code"]
        out["apExistsStatus"] = e.response["ResponseMetadata"]["HTTPStatusCode"]
        out["apExistsId"] = e.response.get("AccessPointId")
    for i in range(4):
        efs.create_access_point(ClientToken="page-%d" % i, FileSystemId=fs_id)
    out["apPages"], token = [], None
    while True:  # botocore 1.29 has no paginator for this operation
        kwargs = {"NextToken": token} if token else {}
        page = efs.describe_access_points(FileSystemId=fs_id, MaxResults=2, **kwargs)
        out["apPages"].append(len(page["AccessPoints"]))
        token = page.get("NextToken")
        if not token:
            break
    try:
        efs.describe_access_points(AccessPointId="fsap-00000000000000000")
    except ClientError as e:
        out["apNotFoundCode"] = e.response["Error"]["Code"]
    out["callerAccount"] = sts.get_caller_identity()["Account"]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
