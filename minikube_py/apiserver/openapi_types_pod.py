"""Schema tables for core/v1 Pod and everything a pod template holds (see openapi_schemas.py
for the notation). Kubernetes piece: k8s.io/api/core/v1 types.go doc comments, shortened.

Every map- or list-valued field a manifest commonly sets is listed, because client-side
`kubectl apply` walks these schemas to build its strategic-merge patch and warns on a field it
cannot find; list fields carry upstream's merge keys so container lists merge by name.
"""

from __future__ import annotations

RAW: dict = {}
KINDS = frozenset({"core.Pod", "core.PodTemplate"})
UNLISTED: frozenset = frozenset()

_SOURCES = "Volume sources. Exactly one of hostPath, emptyDir, secret, configMap, ... is set."

TYPES = {
    "core.Pod": ("Pod is a collection of containers that can run on your host. This resource "
                 "is created by clients and scheduled onto hosts.", {
        "spec": ("core.PodSpec", "Specification of the desired behavior of the pod."),
        "status": ("core.PodStatus", "Most recently observed status of the pod. Read-only."),
    }),
    "core.PodTemplate": ("PodTemplate describes a template for creating copies of a predefined "
                         "pod.", {
        "template": ("core.PodTemplateSpec", "Template defines the pods that will be created "
                     "from this pod template."),
    }),
    "core.PodTemplateSpec": ("PodTemplateSpec describes the data a pod should have when "
                             "created from a template", {
        "metadata": ("ObjectMeta", "Standard object's metadata."),
        "spec": ("core.PodSpec", "Specification of the desired behavior of the pod."),
    }),
    "core.PodSpec": ("PodSpec is a description of a pod.", {
        "volumes": ("[core.Volume", "List of volumes that can be mounted by containers "
                    "belonging to the pod.", "name", "merge,retainKeys"),
        "initContainers": ("[core.Container", "List of initialization containers belonging to "
                           "the pod, run in order before the app containers.", "name"),
        "containers": ("[core.Container", "List of containers belonging to the pod. There must "
                       "be at least one container in a Pod. Cannot be updated.", "name"),
        "ephemeralContainers": ("[core.Container", "List of ephemeral containers run in this "
                                "pod, for user-initiated debugging.", "name"),
        "restartPolicy": ("string", "Restart policy for all containers within the pod. One of "
                          "Always, OnFailure, Never. Default to Always."),
        "terminationGracePeriodSeconds": ("int64", "Optional duration in seconds the pod needs "
                                          "to terminate gracefully. Defaults to 30 seconds."),
        "activeDeadlineSeconds": ("int64", "Optional duration in seconds the pod may be active "
                                  "on the node before the system actively tries to mark it "
                                  "failed."),
        "dnsPolicy": ("string", "Set DNS policy for the pod. Defaults to \"ClusterFirst\"."),
        "nodeSelector": ("{string", "NodeSelector is a selector which must be true for the pod "
                         "to fit on a node."),
        "serviceAccountName": ("string", "ServiceAccountName is the name of the ServiceAccount "
                               "to use to run this pod."),
        "serviceAccount": ("string", "DeprecatedServiceAccount is a deprecated alias for "
                           "ServiceAccountName."),
        "automountServiceAccountToken": ("boolean", "Indicates whether a service account token "
                                         "should be automatically mounted."),
        "nodeName": ("string", "NodeName is a request to schedule this pod onto a specific "
                     "node."),
        "hostNetwork": ("boolean", "Host networking requested for this pod."),
        "hostPID": ("boolean", "Use the host's pid namespace."),
        "hostIPC": ("boolean", "Use the host's ipc namespace."),
        "shareProcessNamespace": ("boolean", "Share a single process namespace between all of "
                                  "the containers in a pod."),
        "securityContext": ("core.PodSecurityContext", "SecurityContext holds pod-level "
                            "security attributes and common container settings."),
        "imagePullSecrets": ("[core.LocalObjectReference", "References to secrets in the same "
                             "namespace to use for pulling any of the images.", "name"),
        "hostname": ("string", "Specifies the hostname of the Pod."),
        "subdomain": ("string", "If specified, the fully qualified Pod hostname will be "
                      "\"<hostname>.<subdomain>.<pod namespace>.svc.<cluster domain>\"."),
        "affinity": ("core.Affinity", "If specified, the pod's scheduling constraints"),
        "schedulerName": ("string", "If specified, the pod will be dispatched by specified "
                          "scheduler."),
        "tolerations": ("[core.Toleration", "If specified, the pod's tolerations."),
        "hostAliases": ("[core.HostAlias", "HostAliases is an optional list of hosts and IPs "
                        "that will be injected into the pod's hosts file.", "ip"),
        "priorityClassName": ("string", "If specified, indicates the pod's priority."),
        "priority": ("int32", "The priority value. Populated from PriorityClassName."),
        "dnsConfig": ("core.PodDNSConfig", "Specifies the DNS parameters of a pod."),
        "readinessGates": ("[core.PodReadinessGate", "If specified, all readiness gates will be "
                           "evaluated for pod readiness."),
        "runtimeClassName": ("string", "RuntimeClassName refers to a RuntimeClass object which "
                             "should be used to run this pod."),
        "enableServiceLinks": ("boolean", "Indicates whether information about services should "
                               "be injected into pod's environment variables."),
        "preemptionPolicy": ("string", "PreemptionPolicy is the Policy for preempting pods with "
                             "lower priority."),
        "overhead": ("{Quantity", "Overhead represents the resource overhead associated with "
                     "running a pod for a given RuntimeClass."),
        "topologySpreadConstraints": ("[core.TopologySpreadConstraint", "Describes how a group "
                                      "of pods ought to spread across topology domains.",
                                      "topologyKey"),
        "setHostnameAsFQDN": ("boolean", "If true the pod's hostname will be configured as the "
                              "pod's FQDN."),
        "os": ("core.PodOS", "Specifies the OS of the containers in the pod."),
        "hostUsers": ("boolean", "Use the host's user namespace. Defaults to true."),
        "schedulingGates": ("[core.PodSchedulingGate", "SchedulingGates is an opaque list of "
                            "values that if specified will block scheduling the pod.", "name"),
    }, ("containers",)),
    "core.Container": ("A single application container that you want to run within a pod.", {
        "name": ("string", "Name of the container specified as a DNS_LABEL. Cannot be "
                 "updated."),
        "image": ("string", "Container image name."),
        "command": ("[string", "Entrypoint array. Not executed within a shell."),
        "args": ("[string", "Arguments to the entrypoint."),
        "workingDir": ("string", "Container's working directory."),
        "ports": ("[core.ContainerPort", "List of ports to expose from the container.",
                  "containerPort"),
        "envFrom": ("[core.EnvFromSource", "List of sources to populate environment variables "
                    "in the container."),
        "env": ("[core.EnvVar", "List of environment variables to set in the container.",
                "name"),
        "resources": ("core.ResourceRequirements", "Compute Resources required by this "
                      "container."),
        "volumeMounts": ("[core.VolumeMount", "Pod volumes to mount into the container's "
                         "filesystem.", "mountPath"),
        "volumeDevices": ("[core.VolumeDevice", "volumeDevices is the list of block devices to "
                          "be used by the container.", "devicePath"),
        "livenessProbe": ("core.Probe", "Periodic probe of container liveness. Container will "
                          "be restarted if the probe fails."),
        "readinessProbe": ("core.Probe", "Periodic probe of container service readiness."),
        "startupProbe": ("core.Probe", "StartupProbe indicates that the Pod has successfully "
                         "initialized."),
        "lifecycle": ("core.Lifecycle", "Actions that the management system should take in "
                      "response to container lifecycle events."),
        "terminationMessagePath": ("string", "Path at which the file to which the container's "
                                   "termination message will be written is mounted."),
        "terminationMessagePolicy": ("string", "Indicate how the termination message should be "
                                     "populated: File or FallbackToLogsOnError."),
        "imagePullPolicy": ("string", "Image pull policy. One of Always, Never, IfNotPresent."),
        "securityContext": ("core.SecurityContext", "SecurityContext defines the security "
                            "options the container should be run with."),
        "restartPolicy": ("string", "RestartPolicy defines the restart behavior of individual "
                          "containers in a pod (only \"Always\", for init containers)."),
        "stdin": ("boolean", "Whether this container should allocate a buffer for stdin."),
        "stdinOnce": ("boolean", "Whether the container runtime should close the stdin "
                      "channel after it has been opened by a single attach."),
        "tty": ("boolean", "Whether this container should allocate a TTY for itself."),
    }, ("name",)),
    "core.ContainerPort": ("ContainerPort represents a network port in a single container.", {
        "name": ("string", "If specified, this must be an IANA_SVC_NAME and unique within the "
                 "pod."),
        "hostPort": ("int32", "Number of port to expose on the host."),
        "containerPort": ("int32", "Number of port to expose on the pod's IP address."),
        "protocol": ("string", "Protocol for port. Must be UDP, TCP, or SCTP. Defaults to "
                     "\"TCP\"."),
        "hostIP": ("string", "What host IP to bind the external port to."),
    }, ("containerPort",)),
    "core.EnvVar": ("EnvVar represents an environment variable present in a Container.", {
        "name": ("string", "Name of the environment variable."),
        "value": ("string", "Variable references $(VAR_NAME) are expanded using the previously "
                  "defined environment variables in the container."),
        "valueFrom": ("core.EnvVarSource", "Source for the environment variable's value."),
    }, ("name",)),
    "core.EnvVarSource": ("EnvVarSource represents a source for the value of an EnvVar.", {
        "fieldRef": ("core.ObjectFieldSelector", "Selects a field of the pod."),
        "resourceFieldRef": ("core.ResourceFieldSelector", "Selects a resource of the "
                             "container."),
        "configMapKeyRef": ("core.ConfigMapKeySelector", "Selects a key of a ConfigMap."),
        "secretKeyRef": ("core.SecretKeySelector", "Selects a key of a secret in the pod's "
                         "namespace"),
    }),
    "core.ObjectFieldSelector": ("ObjectFieldSelector selects an APIVersioned field of an "
                                 "object.", {
        "apiVersion": ("string", "Version of the schema the FieldPath is written in terms of."),
        "fieldPath": ("string", "Path of the field to select in the specified API version."),
    }, ("fieldPath",)),
    "core.ResourceFieldSelector": ("ResourceFieldSelector represents container resources (cpu, "
                                   "memory) and their output format", {
        "containerName": ("string", "Container name: required for volumes, optional for env "
                          "vars"),
        "resource": ("string", "Required: resource to select"),
        "divisor": ("Quantity", "Specifies the output format of the exposed resources."),
    }, ("resource",)),
    "core.ConfigMapKeySelector": ("Selects a key from a ConfigMap.", {
        "name": ("string", "Name of the referent."),
        "key": ("string", "The key to select."),
        "optional": ("boolean", "Specify whether the ConfigMap or its key must be defined"),
    }, ("key",)),
    "core.SecretKeySelector": ("SecretKeySelector selects a key of a Secret.", {
        "name": ("string", "Name of the referent."),
        "key": ("string", "The key of the secret to select from. Must be a valid secret key."),
        "optional": ("boolean", "Specify whether the Secret or its key must be defined"),
    }, ("key",)),
    "core.EnvFromSource": ("EnvFromSource represents the source of a set of ConfigMaps or "
                           "Secrets", {
        "prefix": ("string", "Optional text to prepend to the name of each environment "
                   "variable."),
        "configMapRef": ("core.ConfigMapEnvSource", "The ConfigMap to select from"),
        "secretRef": ("core.SecretEnvSource", "The Secret to select from"),
    }),
    "core.ConfigMapEnvSource": ("ConfigMapEnvSource selects a ConfigMap to populate the "
                                "environment variables with.", {
        "name": ("string", "Name of the referent."),
        "optional": ("boolean", "Specify whether the ConfigMap must be defined"),
    }),
    "core.SecretEnvSource": ("SecretEnvSource selects a Secret to populate the environment "
                             "variables with.", {
        "name": ("string", "Name of the referent."),
        "optional": ("boolean", "Specify whether the Secret must be defined"),
    }),
    "core.ResourceRequirements": ("ResourceRequirements describes the compute resource "
                                  "requirements.", {
        "limits": ("{Quantity", "Limits describes the maximum amount of compute resources "
                   "allowed."),
        "requests": ("{Quantity", "Requests describes the minimum amount of compute resources "
                     "required."),
    }),
    "core.VolumeMount": ("VolumeMount describes a mounting of a Volume within a container.", {
        "name": ("string", "This must match the Name of a Volume."),
        "readOnly": ("boolean", "Mounted read-only if true, read-write otherwise."),
        "mountPath": ("string", "Path within the container at which the volume should be "
                      "mounted. Must not contain ':'."),
        "subPath": ("string", "Path within the volume from which the container's volume should "
                    "be mounted."),
        "mountPropagation": ("string", "mountPropagation determines how mounts are propagated "
                             "from the host to container and the other way around."),
        "subPathExpr": ("string", "Expanded path within the volume from which the container's "
                        "volume should be mounted."),
    }, ("name", "mountPath")),
    "core.VolumeDevice": ("volumeDevice describes a mapping of a raw block device within a "
                          "container.", {
        "name": ("string", "name must match the name of a persistentVolumeClaim in the pod"),
        "devicePath": ("string", "devicePath is the path inside of the container that the "
                       "device will be mapped to."),
    }, ("name", "devicePath")),
    "core.Probe": ("Probe describes a health check to be performed against a container to "
                   "determine whether it is alive or ready to receive traffic.", {
        "exec": ("core.ExecAction", "Exec specifies the action to take."),
        "httpGet": ("core.HTTPGetAction", "HTTPGet specifies the http request to perform."),
        "tcpSocket": ("core.TCPSocketAction", "TCPSocket specifies an action involving a TCP "
                      "port."),
        "grpc": ("core.GRPCAction", "GRPC specifies an action involving a GRPC port."),
        "initialDelaySeconds": ("int32", "Number of seconds after the container has started "
                                "before liveness probes are initiated."),
        "timeoutSeconds": ("int32", "Number of seconds after which the probe times out. "
                           "Defaults to 1 second."),
        "periodSeconds": ("int32", "How often (in seconds) to perform the probe. Default to 10 "
                          "seconds."),
        "successThreshold": ("int32", "Minimum consecutive successes for the probe to be "
                             "considered successful after having failed."),
        "failureThreshold": ("int32", "Minimum consecutive failures for the probe to be "
                             "considered failed after having succeeded. Defaults to 3."),
        "terminationGracePeriodSeconds": ("int64", "Optional duration in seconds the pod needs "
                                          "to terminate gracefully upon probe failure."),
    }),
    "core.ExecAction": ("ExecAction describes a \"run in container\" action.", {
        "command": ("[string", "Command is the command line to execute inside the container."),
    }),
    "core.HTTPGetAction": ("HTTPGetAction describes an action based on HTTP Get requests.", {
        "path": ("string", "Path to access on the HTTP server."),
        "port": ("IntOrString", "Name or number of the port to access on the container."),
        "host": ("string", "Host name to connect to, defaults to the pod IP."),
        "scheme": ("string", "Scheme to use for connecting to the host. Defaults to HTTP."),
        "httpHeaders": ("[core.HTTPHeader", "Custom headers to set in the request."),
    }, ("port",)),
    "core.HTTPHeader": ("HTTPHeader describes a custom header to be used in HTTP probes", {
        "name": ("string", "The header field name."),
        "value": ("string", "The header field value"),
    }, ("name", "value")),
    "core.TCPSocketAction": ("TCPSocketAction describes an action based on opening a socket", {
        "port": ("IntOrString", "Number or name of the port to access on the container."),
        "host": ("string", "Optional: Host name to connect to, defaults to the pod IP."),
    }, ("port",)),
    "core.GRPCAction": ("GRPCAction specifies an action involving a GRPC service.", {
        "port": ("int32", "Port number of the gRPC service. Number must be in the range 1 to "
                 "65535."),
        "service": ("string", "Service is the name of the service to place in the gRPC "
                    "HealthCheckRequest."),
    }, ("port",)),
    "core.Lifecycle": ("Lifecycle describes actions that the management system should take in "
                       "response to container lifecycle events.", {
        "postStart": ("core.LifecycleHandler", "PostStart is called immediately after a "
                      "container is created."),
        "preStop": ("core.LifecycleHandler", "PreStop is called immediately before a container "
                    "is terminated."),
    }),
    "core.LifecycleHandler": ("LifecycleHandler defines a specific action that should be taken "
                              "in a lifecycle hook.", {
        "exec": ("core.ExecAction", "Exec specifies the action to take."),
        "httpGet": ("core.HTTPGetAction", "HTTPGet specifies the http request to perform."),
        "tcpSocket": ("core.TCPSocketAction", "Deprecated. Kept for backward compatibility."),
        "sleep": ("core.SleepAction", "Sleep represents the duration that the container should "
                  "sleep before being terminated."),
    }),
    "core.SleepAction": ("SleepAction describes a \"sleep\" action.", {
        "seconds": ("int64", "Seconds is the number of seconds to sleep."),
    }, ("seconds",)),
    "core.SecurityContext": ("SecurityContext holds security configuration that will be "
                             "applied to a container.", {
        "capabilities": ("core.Capabilities", "The capabilities to add/drop when running "
                         "containers."),
        "privileged": ("boolean", "Run container in privileged mode."),
        "seLinuxOptions": ("core.SELinuxOptions", "The SELinux context to be applied to the "
                           "container."),
        "runAsUser": ("int64", "The UID to run the entrypoint of the container process."),
        "runAsGroup": ("int64", "The GID to run the entrypoint of the container process."),
        "runAsNonRoot": ("boolean", "Indicates that the container must run as a non-root "
                         "user."),
        "readOnlyRootFilesystem": ("boolean", "Whether this container has a read-only root "
                                   "filesystem."),
        "allowPrivilegeEscalation": ("boolean", "Controls whether a process can gain more "
                                     "privileges than its parent process."),
        "procMount": ("string", "procMount denotes the type of proc mount to use for the "
                      "containers."),
        "seccompProfile": ("core.SeccompProfile", "The seccomp options to use by this "
                           "container."),
    }),
    "core.PodSecurityContext": ("PodSecurityContext holds pod-level security attributes and "
                                "common container settings.", {
        "seLinuxOptions": ("core.SELinuxOptions", "The SELinux context to be applied to all "
                           "containers."),
        "runAsUser": ("int64", "The UID to run the entrypoint of the container process."),
        "runAsGroup": ("int64", "The GID to run the entrypoint of the container process."),
        "runAsNonRoot": ("boolean", "Indicates that the container must run as a non-root "
                         "user."),
        "supplementalGroups": ("[int64", "A list of groups applied to the first process run in "
                               "each container."),
        "fsGroup": ("int64", "A special supplemental group that applies to all containers in a "
                    "pod."),
        "fsGroupChangePolicy": ("string", "Defines behavior of changing ownership and "
                                "permission of the volume before being exposed inside Pod."),
        "sysctls": ("[core.Sysctl", "Sysctls hold a list of namespaced sysctls used for the "
                    "pod."),
        "seccompProfile": ("core.SeccompProfile", "The seccomp options to use by the "
                           "containers in this pod."),
    }),
    "core.Capabilities": ("Adds and removes POSIX capabilities from running containers.", {
        "add": ("[string", "Added capabilities"),
        "drop": ("[string", "Removed capabilities"),
    }),
    "core.SELinuxOptions": ("SELinuxOptions are the labels to be applied to the container", {
        "user": ("string", "User is a SELinux user label that applies to the container."),
        "role": ("string", "Role is a SELinux role label that applies to the container."),
        "type": ("string", "Type is a SELinux type label that applies to the container."),
        "level": ("string", "Level is SELinux level label that applies to the container."),
    }),
    "core.SeccompProfile": ("SeccompProfile defines a pod/container's seccomp profile "
                            "settings.", {
        "type": ("string", "type indicates which kind of seccomp profile will be applied: "
                 "Localhost, RuntimeDefault or Unconfined."),
        "localhostProfile": ("string", "localhostProfile indicates a profile defined in a file "
                             "on the node should be used."),
    }, ("type",)),
    "core.Sysctl": ("Sysctl defines a kernel parameter to be set", {
        "name": ("string", "Name of a property to set"),
        "value": ("string", "Value of a property to set"),
    }, ("name", "value")),
    "core.LocalObjectReference": ("LocalObjectReference contains enough information to let you "
                                  "locate the referenced object inside the same namespace.", {
        "name": ("string", "Name of the referent."),
    }),
    "core.HostAlias": ("HostAlias holds the mapping between IP and hostnames that will be "
                       "injected as an entry in the pod's hosts file.", {
        "ip": ("string", "IP address of the host file entry."),
        "hostnames": ("[string", "Hostnames for the above IP address."),
    }, ("ip",)),
    "core.PodDNSConfig": ("PodDNSConfig defines the DNS parameters of a pod in addition to "
                          "those generated from DNSPolicy.", {
        "nameservers": ("[string", "A list of DNS name server IP addresses."),
        "searches": ("[string", "A list of DNS search domains for host-name lookup."),
        "options": ("[core.PodDNSConfigOption", "A list of DNS resolver options."),
    }),
    "core.PodDNSConfigOption": ("PodDNSConfigOption defines DNS resolver options of a pod.", {
        "name": ("string", "Required."),
        "value": ("string", "Value of the option."),
    }),
    "core.PodReadinessGate": ("PodReadinessGate contains the reference to a pod condition", {
        "conditionType": ("string", "ConditionType refers to a condition in the pod's condition "
                          "list with matching type."),
    }, ("conditionType",)),
    "core.PodOS": ("PodOS defines the OS parameters of a pod.", {
        "name": ("string", "Name is the name of the operating system: linux or windows."),
    }, ("name",)),
    "core.PodSchedulingGate": ("PodSchedulingGate is associated to a Pod to guard its "
                               "scheduling.", {
        "name": ("string", "Name of the scheduling gate."),
    }, ("name",)),
    "core.Toleration": ("The pod this Toleration is attached to tolerates any taint that "
                        "matches the triple <key,value,effect>.", {
        "key": ("string", "Key is the taint key that the toleration applies to."),
        "operator": ("string", "Operator represents a key's relationship to the value: Exists "
                     "or Equal. Defaults to Equal."),
        "value": ("string", "Value is the taint value the toleration matches to."),
        "effect": ("string", "Effect indicates the taint effect to match: NoSchedule, "
                   "PreferNoSchedule or NoExecute."),
        "tolerationSeconds": ("int64", "The period of time the toleration tolerates the taint "
                              "(NoExecute only)."),
    }),
    "core.TopologySpreadConstraint": ("TopologySpreadConstraint specifies how to spread "
                                      "matching pods among the given topology.", {
        "maxSkew": ("int32", "MaxSkew describes the degree to which pods may be unevenly "
                    "distributed."),
        "topologyKey": ("string", "TopologyKey is the key of node labels."),
        "whenUnsatisfiable": ("string", "How to deal with a pod if it doesn't satisfy the "
                              "spread constraint: DoNotSchedule or ScheduleAnyway."),
        "labelSelector": ("LabelSelector", "Used to find matching pods."),
        "minDomains": ("int32", "MinDomains indicates a minimum number of eligible domains."),
        "nodeAffinityPolicy": ("string", "How to treat the pod's nodeAffinity/nodeSelector when "
                               "calculating pod topology spread skew."),
        "nodeTaintsPolicy": ("string", "How to treat node taints when calculating pod topology "
                             "spread skew."),
        "matchLabelKeys": ("[string", "A set of pod label keys to select the pods over which "
                           "spreading will be calculated."),
    }, ("maxSkew", "topologyKey", "whenUnsatisfiable")),
}

# Volumes, affinity and pod status follow; split only to keep each table readable.
TYPES.update({
    "core.Volume": ("Volume represents a named volume in a pod that may be accessed by any "
                    "container in the pod.", {
        "name": ("string", "name of the volume. Must be a DNS_LABEL and unique within the "
                 "pod."),
        "hostPath": ("core.HostPathVolumeSource", "hostPath represents a pre-existing file or "
                     "directory on the host machine. " + _SOURCES),
        "emptyDir": ("core.EmptyDirVolumeSource", "emptyDir represents a temporary directory "
                     "that shares a pod's lifetime."),
        "secret": ("core.SecretVolumeSource", "secret represents a secret that should populate "
                   "this volume."),
        "configMap": ("core.ConfigMapVolumeSource", "configMap represents a configMap that "
                      "should populate this volume"),
        "persistentVolumeClaim": ("core.PersistentVolumeClaimVolumeSource", "Represents a "
                                  "reference to a PersistentVolumeClaim in the same "
                                  "namespace."),
        "downwardAPI": ("core.DownwardAPIVolumeSource", "downwardAPI represents downward API "
                        "about the pod that should populate this volume"),
        "projected": ("core.ProjectedVolumeSource", "projected items for all in one resources "
                      "secrets, configmaps, and downward API"),
        "nfs": ("core.NFSVolumeSource", "nfs represents an NFS mount on the host that shares a "
                "pod's lifetime"),
    }, ("name",)),
    "core.HostPathVolumeSource": ("Represents a host path mapped into a pod.", {
        "path": ("string", "path of the directory on the host."),
        "type": ("string", "type for HostPath Volume. Defaults to \"\"."),
    }, ("path",)),
    "core.EmptyDirVolumeSource": ("Represents an empty directory for a pod.", {
        "medium": ("string", "medium represents what type of storage medium should back this "
                   "directory: \"\" or Memory."),
        "sizeLimit": ("Quantity", "sizeLimit is the total amount of local storage required for "
                      "this EmptyDir volume."),
    }),
    "core.SecretVolumeSource": ("Adapts a Secret into a volume.", {
        "secretName": ("string", "secretName is the name of the secret in the pod's namespace "
                       "to use."),
        "items": ("[core.KeyToPath", "items maps keys of the Secret to paths in the volume."),
        "defaultMode": ("int32", "defaultMode is Optional: mode bits used to set permissions on "
                        "created files by default. Defaults to 0644."),
        "optional": ("boolean", "optional field specify whether the Secret or its keys must be "
                     "defined"),
    }),
    "core.ConfigMapVolumeSource": ("Adapts a ConfigMap into a volume.", {
        "name": ("string", "Name of the referent."),
        "items": ("[core.KeyToPath", "items maps keys of the ConfigMap to paths in the "
                  "volume."),
        "defaultMode": ("int32", "defaultMode is optional: mode bits used to set permissions on "
                        "created files by default. Defaults to 0644."),
        "optional": ("boolean", "optional specify whether the ConfigMap or its keys must be "
                     "defined"),
    }),
    "core.KeyToPath": ("Maps a string key to a path within a volume.", {
        "key": ("string", "key is the key to project."),
        "path": ("string", "path is the relative path of the file to map the key to."),
        "mode": ("int32", "mode is Optional: mode bits used to set permissions on this file."),
    }, ("key", "path")),
    "core.PersistentVolumeClaimVolumeSource": ("PersistentVolumeClaimVolumeSource references "
                                               "the user's PVC in the same namespace.", {
        "claimName": ("string", "claimName is the name of a PersistentVolumeClaim in the same "
                      "namespace as the pod using this volume."),
        "readOnly": ("boolean", "readOnly Will force the ReadOnly setting in VolumeMounts."),
    }, ("claimName",)),
    "core.DownwardAPIVolumeSource": ("DownwardAPIVolumeSource represents a volume containing "
                                     "downward API info.", {
        "items": ("[core.DownwardAPIVolumeFile", "Items is a list of downward API volume "
                  "file"),
        "defaultMode": ("int32", "Optional: mode bits to use on created files by default."),
    }),
    "core.DownwardAPIVolumeFile": ("DownwardAPIVolumeFile represents information to create the "
                                   "file containing the pod field", {
        "path": ("string", "Required: Path is the relative path name of the file to be "
                 "created."),
        "fieldRef": ("core.ObjectFieldSelector", "Required: Selects a field of the pod."),
        "resourceFieldRef": ("core.ResourceFieldSelector", "Selects a resource of the "
                             "container."),
        "mode": ("int32", "Optional: mode bits used to set permissions on this file."),
    }, ("path",)),
    "core.ProjectedVolumeSource": ("Represents a projected volume source", {
        "sources": ("[core.VolumeProjection", "sources is the list of volume projections"),
        "defaultMode": ("int32", "defaultMode are the mode bits used to set permissions on "
                        "created files by default."),
    }),
    "core.VolumeProjection": ("Projection that may be projected along with other supported "
                              "volume types", {
        "secret": ("core.SecretProjection", "secret information about the secret data to "
                   "project"),
        "configMap": ("core.ConfigMapProjection", "configMap information about the configMap "
                      "data to project"),
        "downwardAPI": ("core.DownwardAPIProjection", "downwardAPI information about the "
                        "downwardAPI data to project"),
        "serviceAccountToken": ("core.ServiceAccountTokenProjection", "serviceAccountToken is "
                                "information about the serviceAccountToken data to project"),
    }),
    "core.SecretProjection": ("Adapts a secret into a projected volume.", {
        "name": ("string", "Name of the referent."),
        "items": ("[core.KeyToPath", "items maps keys of the Secret to paths in the volume."),
        "optional": ("boolean", "optional field specify whether the Secret or its key must be "
                     "defined"),
    }),
    "core.ConfigMapProjection": ("Adapts a ConfigMap into a projected volume.", {
        "name": ("string", "Name of the referent."),
        "items": ("[core.KeyToPath", "items maps keys of the ConfigMap to paths in the "
                  "volume."),
        "optional": ("boolean", "optional specify whether the ConfigMap or its keys must be "
                     "defined"),
    }),
    "core.DownwardAPIProjection": ("Represents downward API info for projecting into a "
                                   "projected volume.", {
        "items": ("[core.DownwardAPIVolumeFile", "Items is a list of DownwardAPIVolume file"),
    }),
    "core.ServiceAccountTokenProjection": ("ServiceAccountTokenProjection represents a "
                                           "projected service account token volume.", {
        "audience": ("string", "audience is the intended audience of the token."),
        "expirationSeconds": ("int64", "expirationSeconds is the requested duration of "
                              "validity of the service account token."),
        "path": ("string", "path is the path relative to the mount point of the file to "
                 "project the token into."),
    }, ("path",)),
    "core.NFSVolumeSource": ("Represents an NFS mount that lasts the lifetime of a pod.", {
        "server": ("string", "server is the hostname or IP address of the NFS server."),
        "path": ("string", "path that is exported by the NFS server."),
        "readOnly": ("boolean", "readOnly here will force the NFS export to be mounted with "
                     "read-only permissions."),
    }, ("server", "path")),
})
