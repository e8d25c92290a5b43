"""Schema tables for core/v1 PersistentVolume and PersistentVolumeClaim (see openapi_schemas.py
for the notation). Kubernetes piece: k8s.io/api/core/v1 types.go doc comments, shortened.

What kubectl needs from them: `explain pv.spec`, and client-side `apply` of a PV or PVC, whose
strategic-merge patch walks these schemas (accessModes is an atomic list upstream, so it has no
merge key). Sources a PersistentVolume shares with pod volumes reuse the pod tables' schemas;
the cloud sources are typed as free-form objects.
"""

from __future__ import annotations

#: one free-form schema for the cloud and network sources we accept but do not model (our
#: name, not upstream's: upstream has one typed schema per source)
RAW: dict = {"core.PersistentVolumeCloudSource": {
    "type": "object", "x-kubernetes-preserve-unknown-fields": True,
    "description": "A cloud or network volume source (accepted, not simulated further).",
}}
KINDS = frozenset({"core.PersistentVolume", "core.PersistentVolumeClaim",
                   "storage.StorageClass"})
UNLISTED: frozenset = frozenset()

_CLOUD = "core.PersistentVolumeCloudSource"
_CLOUD_SOURCES = (
    "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "rbd", "quobyte",
    "cephfs", "iscsi", "cinder", "fc", "flexVolume", "azureFile", "vsphereVolume",
    "photonPersistentDisk", "portworxVolume", "azureDisk", "scaleIO", "storageos",
)
_ACCESS_MODES = "accessModes contains all ways the volume can be mounted."
_PV_SPEC_FIELDS: dict = {
    "capacity": ("{Quantity", "capacity is the description of the persistent volume's "
                 "resources and capacity."),
    "accessModes": ("[string", _ACCESS_MODES),
    "claimRef": ("core.ObjectReference", "claimRef is part of a bi-directional binding between "
                 "PersistentVolume and PersistentVolumeClaim."),
    "persistentVolumeReclaimPolicy": ("string", "persistentVolumeReclaimPolicy defines what "
                                      "happens to a persistent volume when released from its "
                                      "claim. Valid options are Retain (default), Delete and "
                                      "Recycle."),
    "storageClassName": ("string", "storageClassName is the name of StorageClass to which "
                         "this persistent volume belongs."),
    "mountOptions": ("[string", "mountOptions is the list of mount options."),
    "volumeMode": ("string", "volumeMode defines if a volume is intended to be used with a "
                   "formatted filesystem or to remain in raw block state."),
    "nodeAffinity": ("core.VolumeNodeAffinity", "nodeAffinity defines constraints that limit "
                     "what nodes this volume can be accessed from."),
    "volumeAttributesClassName": ("string", "Name of VolumeAttributesClass to which this "
                                  "persistent volume belongs."),
    "hostPath": ("core.HostPathVolumeSource", "hostPath represents a directory on the host."),
    "nfs": ("core.NFSVolumeSource", "nfs represents an NFS mount on the host."),
    "local": ("core.LocalVolumeSource", "local represents directly-attached storage with node "
              "affinity"),
    "csi": ("core.CSIPersistentVolumeSource", "csi represents storage that is handled by an "
            "external CSI driver."),
}
_PV_SPEC_FIELDS.update((name, (_CLOUD, f"{name} volume source.")) for name in _CLOUD_SOURCES)

TYPES = {
    "core.PersistentVolume": ("PersistentVolume (PV) is a storage resource provisioned by an "
                              "administrator. It is analogous to a node.", {
        "spec": ("core.PersistentVolumeSpec", "spec defines a specification of a persistent "
                 "volume owned by the cluster. Provisioned by an administrator."),
        "status": ("core.PersistentVolumeStatus", "status represents the current information/"
                   "status for the persistent volume. Populated by the system. Read-only."),
    }),
    "core.PersistentVolumeSpec": ("PersistentVolumeSpec is the specification of a persistent "
                                  "volume.", _PV_SPEC_FIELDS),
    "core.PersistentVolumeStatus": ("PersistentVolumeStatus is the current status of a "
                                    "persistent volume.", {
        "phase": ("string", "phase indicates if a volume is available, bound to a claim, or "
                  "released by a claim."),
        "message": ("string", "message is a human-readable message indicating details about "
                    "why the volume is in this state."),
        "reason": ("string", "reason is a brief CamelCase string that describes any failure."),
        "lastPhaseTransitionTime": ("Time", "lastPhaseTransitionTime is the time the phase "
                                    "transitioned from one to another."),
    }),
    "core.VolumeNodeAffinity": ("VolumeNodeAffinity defines constraints that limit what nodes "
                                "this volume can be accessed from.", {
        "required": ("core.NodeSelector", "required specifies hard node constraints that must "
                     "be met."),
    }),
    "core.LocalVolumeSource": ("Local represents directly-attached storage with node affinity",
                               {
        "path": ("string", "path of the full path to the volume on the node."),
        "fsType": ("string", "fsType is the filesystem type to mount."),
    }, ("path",)),
    "core.CSIPersistentVolumeSource": ("Represents storage that is managed by an external CSI "
                                       "volume driver", {
        "driver": ("string", "driver is the name of the driver to use for this volume."),
        "volumeHandle": ("string", "volumeHandle is the unique volume name returned by the CSI "
                         "volume plugin's CreateVolume to refer to the volume on all subsequent "
                         "calls."),
        "readOnly": ("boolean", "readOnly value to pass to ControllerPublishVolumeRequest."),
        "fsType": ("string", "fsType to mount."),
        "volumeAttributes": ("{string", "volumeAttributes of the volume to publish."),
    }, ("driver", "volumeHandle")),
    "core.PersistentVolumeClaim": ("PersistentVolumeClaim is a user's request for and claim to "
                                   "a persistent volume", {
        "spec": ("core.PersistentVolumeClaimSpec", "spec defines the desired characteristics of "
                 "a volume requested by a pod author."),
        "status": ("core.PersistentVolumeClaimStatus", "status represents the current "
                   "information/status of a persistent volume claim. Read-only."),
    }),
    "core.PersistentVolumeClaimSpec": ("PersistentVolumeClaimSpec describes the common "
                                       "attributes of storage devices and allows a Source for "
                                       "provider-specific attributes", {
        "accessModes": ("[string", "accessModes contains the desired access modes the volume "
                        "should have."),
        "selector": ("LabelSelector", "selector is a label query over volumes to consider for "
                     "binding."),
        "resources": ("core.VolumeResourceRequirements", "resources represents the minimum "
                      "resources the volume should have."),
        "volumeName": ("string", "volumeName is the binding reference to the PersistentVolume "
                       "backing this claim."),
        "storageClassName": ("string", "storageClassName is the name of the StorageClass "
                             "required by the claim."),
        "volumeMode": ("string", "volumeMode defines what type of volume is required by the "
                       "claim. Value of Filesystem is implied when not included in claim spec."),
        "dataSource": ("core.TypedLocalObjectReference", "dataSource field can be used to "
                       "specify an existing PVC or a VolumeSnapshot."),
        "dataSourceRef": ("core.TypedObjectReference", "dataSourceRef specifies the object "
                          "from which to populate the volume with data."),
        "volumeAttributesClassName": ("string", "volumeAttributesClassName may be used to set "
                                      "the VolumeAttributesClass used by this claim."),
    }),
    "core.VolumeResourceRequirements": ("VolumeResourceRequirements describes the storage "
                                        "resource requirements for a volume.", {
        "limits": ("{Quantity", "Limits describes the maximum amount of compute resources "
                   "allowed."),
        "requests": ("{Quantity", "Requests describes the minimum amount of compute resources "
                     "required."),
    }),
    "core.TypedLocalObjectReference": ("TypedLocalObjectReference contains enough information "
                                       "to let you locate the typed referenced object inside "
                                       "the same namespace.", {
        "apiGroup": ("string", "APIGroup is the group for the resource being referenced."),
        "kind": ("string", "Kind is the type of resource being referenced"),
        "name": ("string", "Name is the name of resource being referenced"),
    }, ("kind", "name")),
    "core.TypedObjectReference": ("TypedObjectReference contains enough information to let you "
                                  "locate the typed referenced object", {
        "apiGroup": ("string", "APIGroup is the group for the resource being referenced."),
        "kind": ("string", "Kind is the type of resource being referenced"),
        "name": ("string", "Name is the name of resource being referenced"),
        "namespace": ("string", "Namespace is the namespace of resource being referenced"),
    }, ("kind", "name")),
    "core.PersistentVolumeClaimStatus": ("PersistentVolumeClaimStatus is the current status of "
                                         "a persistent volume claim.", {
        "phase": ("string", "phase represents the current phase of PersistentVolumeClaim."),
        "accessModes": ("[string", "accessModes contains the actual access modes the volume "
                        "backing the PVC has."),
        "capacity": ("{Quantity", "capacity represents the actual resources of the underlying "
                     "volume."),
        "conditions": ("[core.PersistentVolumeClaimCondition", "conditions is the current "
                       "Condition of persistent volume claim.", "type"),
    }),
    "core.PersistentVolumeClaimCondition": ("PersistentVolumeClaimCondition contains details "
                                            "about state of pvc", {
        "type": ("string", "Type is the type of the condition."),
        "status": ("string", "Status is the status of the condition."),
        "lastProbeTime": ("Time", "lastProbeTime is the time we probed the condition."),
        "lastTransitionTime": ("Time", "lastTransitionTime is the time the condition "
                               "transitioned from one status to another."),
        "reason": ("string", "reason is a unique, this should be a short, machine "
                   "understandable string."),
        "message": ("string", "message is the human-readable message indicating details about "
                    "last transition."),
    }, ("type", "status")),
    # storage.k8s.io/v1 (k8s.io/api/storage/v1 types.go); the other storage kinds are described
    # from their protobuf descriptors alone (openapi_proto_schemas.py)
    "storage.StorageClass": (("StorageClass describes the parameters for a class of storage for "
                              "which PersistentVolumes can be dynamically provisioned.\n\n"
                              "StorageClasses are non-namespaced; the name of the storage class "
                              "according to etcd is in ObjectMeta.Name."), {
        "provisioner": ("string", "provisioner indicates the type of the provisioner."),
        "parameters": ("{string", "parameters holds the parameters for the provisioner that "
                       "should create volumes of this storage class."),
        "reclaimPolicy": ("string", "reclaimPolicy controls the reclaimPolicy for dynamically "
                          "provisioned PersistentVolumes of this storage class. Defaults to "
                          "Delete."),
        "mountOptions": ("[string", "mountOptions controls the mountOptions for dynamically "
                         "provisioned PersistentVolumes of this storage class. e.g. [\"ro\", "
                         "\"soft\"]. Not validated - mount of the PVs will simply fail if one "
                         "is invalid."),
        "allowVolumeExpansion": ("boolean", "allowVolumeExpansion shows whether the storage "
                                 "class allow volume expand."),
        "volumeBindingMode": ("string", "volumeBindingMode indicates how "
                              "PersistentVolumeClaims should be provisioned and bound.  When "
                              "unset, VolumeBindingImmediate is used. This field is only honored "
                              "by servers that enable the VolumeScheduling feature."),
        "allowedTopologies": ("[core.TopologySelectorTerm", "allowedTopologies restrict the "
                              "node topologies where volumes can be dynamically provisioned. "
                              "Each volume plugin defines its own supported topology "
                              "specifications. An empty TopologySelectorTerm list means there "
                              "is no topology restriction. This field is only honored by "
                              "servers that enable the VolumeScheduling feature."),
    }, ("provisioner",)),
}
