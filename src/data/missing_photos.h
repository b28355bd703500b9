/* missing_photos: photos a dataset lists but does not hold, with data.skip_missing_images:
 * counted and the first named while a reader goes through its list, then said once. */
#ifndef CS_MISSING_PHOTOS_H
#define CS_MISSING_PHOTOS_H

typedef struct {
    int n;
    char first[4200];
} cs_missing;

/* One more missing photo at PATH. */
void cs_missing_add(cs_missing *m, const char *path);
/* A note that M->n of the LISTED photos LIST names were left out (nothing when none). */
void cs_missing_note(const cs_missing *m, int listed, const char *list);

#endif
