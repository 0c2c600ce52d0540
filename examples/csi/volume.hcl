# A CSI volume on the hostpath plugin (examples/csi/hostpath-plugin.hcl),
# for examples/csi/app.hcl.
#   bin/troupe volume create examples/csi/volume.hcl   # the plugin makes it
#   bin/troupe volume status vol1
# To register a volume that already exists instead, add
# external_id = "<the plugin's ID for it>" and run `troupe volume register`.
id        = "vol1"
name      = "vol1"
type      = "csi"
plugin_id = "hostpath"

capacity_min = "10MiB"
capacity_max = "1GiB"

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
