/* missing_photos: see missing_photos.h. */
#include "missing_photos.h"

#include <stdio.h>

void cs_missing_add(cs_missing *m, const char *path)
{
    if (!m->n++) snprintf(m->first, sizeof m->first, "%s", path);
}

void cs_missing_note(const cs_missing *m, int listed, const char *list)
{
    if (m->n)
        printf("note: %d of the %d photos %s lists are missing and were left out (data.skip_missing_images; the "
               "first: %s)\n", m->n, listed, list, m->first);
}
