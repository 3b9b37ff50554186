#include <stdio.h>
#include <string.h>
#include "wsfs.h"

int main(void) {
    char *opened = wsfs_workspace_open("{\"root\": \"/tmp/agent-ws\", \"create_root\": true}");
    puts(opened);                       /* {"ok":true,"data":{"workspace":1,...},...} */
    wsfs_string_free(opened);
    uint64_t ws = 1;                    /* parse data.workspace with your JSON library */

    char *r = wsfs_write_file(ws, "{\"path\": \"notes/hello.txt\", \"content\": \"hi\\n\"}");
    puts(r);
    wsfs_string_free(r);

    /* Reads: the content after the first '\n', outside the JSON (see "Reading files"). */
    r = wsfs_call_with_options(ws, "read_file", "{\"path\": \"notes/hello.txt\"}",
                               "{\"output\": \"data_raw\"}");
    char *nl = strchr(r, '\n');
    printf("content: %s", nl ? nl + 1 : r);   /* content: hi */
    wsfs_string_free(r);

    r = wsfs_call(ws, "read_file", "{\"path\": \"../../etc/passwd\"}");
    puts(r);                            /* {"ok":false,"error":{"code":"outside_workspace",...} */
    wsfs_string_free(r);

    wsfs_string_free(wsfs_workspace_close(ws));
    return 0;
}
