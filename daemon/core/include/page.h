/* The job's live page (page.c), served at GET /job. */
#ifndef HVDD_PAGE_H
#define HVDD_PAGE_H

extern const char hvdd_job_page[];

#endif
